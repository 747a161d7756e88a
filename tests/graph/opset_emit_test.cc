// opset_emit: node forms per opset and the opset/IR raise (E2).
#include "graph/opset_emit.h"

#include <onnx/onnx_pb.h>

#include <gtest/gtest.h>

#include "graph/node_builder.h"

namespace nuphar {
namespace {

TEST(OpsetEmit, AxesAndSplitFormsFollowTheOpset) {
  for (int64_t opset : {11, 13}) {
    onnx::GraphProto g;
    NameTable names;
    NodeBuilder b(&g, &names, opset);
    EmitSqueeze(b, "x", {0});
    EmitUnsqueeze(b, "x", {1});
    EmitSplit(b, "x", 1, {2, 3}, {"a", "b"});
    EmitReduceSum(b, "x", {1}, true);
    for (const auto& n : g.node()) {
      EXPECT_EQ(n.input_size(), opset >= 13 ? 2 : 1) << n.op_type();
      EXPECT_EQ(FindAttr(n, n.op_type() == "Split" ? "split" : "axes") != nullptr, opset < 13) << n.op_type();
    }
    EXPECT_EQ(g.node(2).output(0), "a");
  }
}

TEST(OpsetEmit, SliceAndClipThresholds) {
  for (int64_t opset : {9, 10, 11}) {
    onnx::GraphProto g;
    NameTable names;
    NodeBuilder b(&g, &names, opset);
    EmitSlice(b, "x", {1}, {2}, {0});
    EmitClip(b, "x", -1.f, 1.f);
    EXPECT_EQ(g.node(0).input_size(), opset >= 10 ? 4 : 1);
    EXPECT_EQ(g.node(1).input_size(), opset >= 11 ? 3 : 1);
    EXPECT_EQ(FindAttr(g.node(1), "min") != nullptr, opset < 11);
  }
}

TEST(EnsureOpset, AddsDefaultDomainRaisesIrAndRefusesChangedSchemas) {
  onnx::ModelProto m;
  m.set_ir_version(3);
  auto v = EnsureOpset(m, 9);
  ASSERT_TRUE(v.ok());
  EXPECT_EQ(*v, 9);
  ASSERT_EQ(m.opset_import_size(), 1);
  EXPECT_EQ(m.opset_import(0).domain(), "");  // never "onnx" (B20)
  EXPECT_EQ(m.ir_version(), 4);

  onnx::ModelProto old;
  old.set_ir_version(3);
  old.add_opset_import()->set_version(8);
  auto* n = old.mutable_graph()->add_node();
  n->set_op_type("Upsample");  // changed in opset 9
  n->set_name("up");
  auto refused = EnsureOpset(old, 9);
  ASSERT_FALSE(refused.ok());
  EXPECT_NE(refused.message().find("'up' (Upsample)"), std::string::npos) << refused.message();

  onnx::ModelProto newer;
  newer.set_ir_version(8);
  newer.add_opset_import()->set_version(17);
  ASSERT_TRUE(EnsureOpset(newer, 9).ok());
  EXPECT_EQ(newer.opset_import(0).version(), 17);
  EXPECT_EQ(newer.ir_version(), 8);
}

}  // namespace
}  // namespace nuphar
