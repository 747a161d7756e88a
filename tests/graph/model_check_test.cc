// The structural check every load runs (graph/model_check.h): each refusal names the graph, the
// node and the value; what the original tools write (repeated zero-state inputs and identical
// initializers, unsorted nodes, outer-scope references) is accepted.
#include "graph/model_check.h"

#include <gtest/gtest.h>
#include <onnx/onnx_pb.h>

#include "graph/tensor_data.h"

namespace nuphar {
namespace {

// y = Relu(x), x: float[2, 3]; opset 13.
onnx::ModelProto Relu() {
  onnx::ModelProto m;
  m.set_ir_version(8);
  m.add_opset_import()->set_version(13);
  auto* g = m.mutable_graph();
  g->set_name("g");
  auto* x = g->add_input();
  x->set_name("x");
  x->mutable_type()->mutable_tensor_type()->set_elem_type(onnx::TensorProto::FLOAT);
  for (int64_t d : {2, 3}) x->mutable_type()->mutable_tensor_type()->mutable_shape()->add_dim()->set_dim_value(d);
  g->add_output()->set_name("y");
  auto* n = g->add_node();
  n->set_name("relu");
  n->set_op_type("Relu");
  n->add_input("x");
  n->add_output("y");
  return m;
}

std::string Check(const onnx::ModelProto& m) {
  Status s = CheckModelStructure(m, "m.onnx");
  return s.ok() ? "ok" : s.message();
}

TEST(ModelCheck, AcceptsAGoodModelAndWhatTheOriginalToolsWrite) {
  EXPECT_EQ(Check(Relu()), "ok");
  auto m = Relu();
  *m.mutable_graph()->add_input() = m.graph().input(0);  // an input listed twice
  *m.mutable_graph()->add_initializer() = MakeTensor<float>("w", {1}, {1.f});
  *m.mutable_graph()->add_initializer() = MakeTensor<float>("w", {1}, {1.f});  // repeated identically
  EXPECT_EQ(Check(m), "ok");
  // Nodes out of order are not a cycle.
  auto* first = m.mutable_graph()->add_node();
  first->set_op_type("Relu");
  first->add_input("y");
  first->add_output("z");
  m.mutable_graph()->mutable_node()->SwapElements(0, 1);
  EXPECT_EQ(Check(m), "ok");
}

TEST(ModelCheck, RefusalsNameTheGraphNodeAndValue) {
  auto dup = Relu();
  *dup.mutable_graph()->add_node() = dup.graph().node(0);
  dup.mutable_graph()->mutable_node(1)->set_name("again");
  EXPECT_EQ(Check(dup), "m.onnx: graph 'g': node 'again' (Relu): output 'y' is already defined in the graph (names must be unique)");

  auto dangling = Relu();
  dangling.mutable_graph()->mutable_node(0)->set_input(0, "nowhere");
  EXPECT_EQ(Check(dangling), "m.onnx: graph 'g': node 'relu' (Relu): input 'nowhere' is not produced by any node, input or initializer");

  auto cycle = Relu();
  cycle.mutable_graph()->mutable_node(0)->set_input(0, "y");
  EXPECT_EQ(Check(cycle), "m.onnx: graph 'g': node 'relu' (Relu): the graph has a cycle through this node");

  auto ghost = Relu();
  ghost.mutable_graph()->add_output()->set_name("ghost");
  EXPECT_EQ(Check(ghost), "m.onnx: graph 'g': graph output 'ghost' is not produced by any node or input");

  auto size = Relu();
  auto w = MakeTensor<float>("w", {4}, {1, 2, 3, 4});
  w.set_dims(0, int64_t{1} << 40);
  *size.mutable_graph()->add_initializer() = w;
  EXPECT_EQ(Check(size), "m.onnx: graph 'g': initializer 'w' declares 1099511627776 elements but holds 16 bytes");

  auto attr = Relu();
  attr.mutable_graph()->mutable_node(0)->set_op_type("Transpose");
  auto* perm = attr.mutable_graph()->mutable_node(0)->add_attribute();
  perm->set_name("perm");
  perm->set_type(onnx::AttributeProto::FLOATS);
  perm->add_floats(1);
  perm->add_floats(0);
  EXPECT_EQ(Check(attr), "m.onnx: graph 'g': node 'relu' (Transpose): attribute 'perm' has type FLOATS, the op expects INTS");
}

TEST(ModelCheck, OpsetsAndSubgraphs) {
  auto zero = Relu();
  zero.mutable_opset_import(0)->set_version(0);
  EXPECT_NE(Check(zero).find("imports opset 0 of the default domain"), std::string::npos) << Check(zero);
  auto future = Relu();
  future.mutable_opset_import(0)->set_version(99);
  EXPECT_NE(Check(future).find("imports ONNX opset 99; nuphar-cpp knows opsets up to 21"),
            std::string::npos)
      << Check(future);

  // An If branch may read the enclosing graph's values, but not a value nobody defines.
  auto m = Relu();
  auto* node = m.mutable_graph()->add_node();
  node->set_name("if");
  node->set_op_type("If");
  node->add_input("x");
  node->add_output("z");
  for (const char* branch : {"then_branch", "else_branch"}) {
    auto* a = node->add_attribute();
    a->set_name(branch);
    a->set_type(onnx::AttributeProto::GRAPH);
    auto* body = a->mutable_g();
    body->set_name(branch);
    body->add_output()->set_name("b");
    auto* id = body->add_node();
    id->set_name("id");
    id->set_op_type("Identity");
    id->add_input("y");  // from the outer graph
    id->add_output("b");
  }
  EXPECT_EQ(Check(m), "ok");
  m.mutable_graph()->mutable_node(1)->mutable_attribute(1)->mutable_g()->mutable_node(0)->set_input(0, "missing");
  EXPECT_EQ(Check(m), "m.onnx: graph 'else_branch': node 'id' (Identity): input 'missing' is not produced by any node, input or initializer");
}

}  // namespace
}  // namespace nuphar
