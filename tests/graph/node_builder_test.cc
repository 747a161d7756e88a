// node_builder: deterministic, collision-free names (E5).
#include "graph/node_builder.h"

#include <onnx/onnx_pb.h>

#include <gtest/gtest.h>

namespace nuphar {
namespace {

TEST(NameTable, AutoNamesSkipTakenNamesAndFixedNamesGetSuffixes) {
  onnx::ModelProto m;
  auto* n = m.mutable_graph()->add_node();
  n->set_name("YMatMul_0");
  n->add_output("split_i");
  n->add_input("Y_Const_0");
  NameTable names(m);
  EXPECT_EQ(names.NodeName("Y", "MatMul"), "YMatMul_1");  // _0 taken by the exporter
  EXPECT_EQ(names.NodeName("Y", "Add"), "YAdd_2");        // one counter per run, as the original
  EXPECT_EQ(names.ConstName("Y"), "Y_Const_1");
  EXPECT_EQ(names.Fixed("split_i"), "split_i_1");
  EXPECT_EQ(names.Fixed("split_i"), "split_i_2");
  EXPECT_EQ(names.Fixed("split_o"), "split_o");
}

TEST(NameTable, SameModelGivesSameNames) {
  onnx::ModelProto m;
  NameTable a(m), b(m);
  for (int i = 0; i < 5; ++i) EXPECT_EQ(a.NodeName("p", "Op"), b.NodeName("p", "Op"));
}

TEST(NodeBuilder, AutoOutputIsNodeNameAndConstantsAreInitializers) {
  onnx::GraphProto g;
  NameTable names;
  NodeBuilder b(&g, &names, 13, "P");
  std::string c = b.ScalarF(2.f);
  std::string out = b.Op("Mul", {"x", c});
  ASSERT_EQ(g.node_size(), 1);
  EXPECT_EQ(g.node(0).name(), out);
  EXPECT_EQ(out, "PMul_0");
  EXPECT_EQ(c, "P_Const_0");
  ASSERT_EQ(g.initializer_size(), 1);
  EXPECT_EQ(g.initializer(0).name(), c);
  EXPECT_EQ(AttrInt(g.node(0), "missing", 7), 7);
}

}  // namespace
}  // namespace nuphar
