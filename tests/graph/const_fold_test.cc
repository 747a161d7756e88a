// const_fold: weights computed by Constant -> Unsqueeze / Concat / Slice / Gather / Transpose / Cast chains.
#include "graph/const_fold.h"

#include <onnx/onnx_pb.h>

#include <gtest/gtest.h>

#include "graph/graph_view.h"
#include "graph/node_builder.h"
#include "graph/tensor_data.h"

namespace nuphar {
namespace {

std::string AddConstant(NodeBuilder& b, const std::string& name, onnx::TensorProto t) {
  auto& n = b.Add("Constant", {}, {name});
  auto* a = n.add_attribute();
  a->set_name("value");
  a->set_type(onnx::AttributeProto::TENSOR);
  *a->mutable_t() = std::move(t);
  return name;
}

TEST(ConstFold, FoldsExporterChains) {
  onnx::GraphProto g;
  NameTable names;
  NodeBuilder b(&g, &names, 13);
  // k [2, 3] = 0..5 ; u = Unsqueeze(k, 0) [1, 2, 3]; c = Concat(u, u, axis 0) [2, 2, 3]
  AddConstant(b, "k", MakeTensor<float>("", {2, 3}, {0, 1, 2, 3, 4, 5}));
  b.Op("Unsqueeze", {"k", b.Ints64({0})}, "u");
  SetAttr(b.Add("Concat", {"u", "u"}, {"c"}), "axis", static_cast<int64_t>(0));
  // t = Transpose(k) [3, 2]; s = Slice(t, [1], [3], [0]) [2, 2]; ga = Gather(k, [1], axis 1) [2, 1]
  SetAttr(b.Add("Transpose", {"k"}, {"t"}), "perm", std::vector<int64_t>{1, 0});
  b.Op("Slice", {"t", b.Ints64({1}), b.Ints64({3}), b.Ints64({0})}, "s");
  SetAttr(b.Add("Gather", {"k", b.Ints64({1})}, {"ga"}), "axis", static_cast<int64_t>(1));
  SetAttr(b.Add("Cast", {"s"}, {"si"}), "to", static_cast<int64_t>(onnx::TensorProto::INT64));
  b.Op("Reshape", {"c", b.Ints64({-1, 3})}, "r");
  b.Op("Relu", {"x"}, "not_constant");
  GraphScope scope{&g, nullptr, "main"};

  auto c = FoldConstant(scope, "c");
  ASSERT_TRUE(c.ok()) << c.message();
  EXPECT_EQ(std::vector<int64_t>(c->tensor().dims().begin(), c->tensor().dims().end()), (std::vector<int64_t>{2, 2, 3}));
  EXPECT_EQ(*ReadTensor<float>(c->tensor()), (std::vector<float>{0, 1, 2, 3, 4, 5, 0, 1, 2, 3, 4, 5}));
  EXPECT_EQ(*ReadTensor<float>(FoldConstant(scope, "s")->tensor()), (std::vector<float>{1, 4, 2, 5}));
  EXPECT_EQ(*ReadTensor<float>(FoldConstant(scope, "ga")->tensor()), (std::vector<float>{1, 4}));
  EXPECT_EQ(*ReadTensor<int64_t>(FoldConstant(scope, "si")->tensor()), (std::vector<int64_t>{1, 4, 2, 5}));
  auto r = FoldConstant(scope, "r");
  ASSERT_TRUE(r.ok());
  EXPECT_EQ(r->tensor().dims(0), 4);
  std::vector<const onnx::NodeProto*> producers;
  ASSERT_TRUE(FoldConstant(scope, "s", &producers).ok());
  EXPECT_EQ(producers.size(), 3u);  // Slice, Transpose, Constant
  auto bad = FoldConstant(scope, "not_constant");
  EXPECT_FALSE(bad.ok());
}

TEST(ConstFold, InitializersAreBorrowedAndFoundInEnclosingGraphs) {
  onnx::GraphProto main, body;
  NameTable names;
  NodeBuilder b(&main, &names, 13);
  b.Const<float>({2}, {1.f, 2.f}, "w");
  GraphScope outer{&main, nullptr, "main"};
  GraphScope inner{&body, &outer, "main/body"};
  auto w = FoldConstant(inner, "w");
  ASSERT_TRUE(w.ok());
  EXPECT_TRUE(w->borrowed());
  EXPECT_EQ(&w->tensor(), &main.initializer(0));
}

// A hostile model's chains are refused with an error, never read out of bounds (fuzz_graph_tools).
TEST(ConstFold, RefusesOutOfRangeAxesIndicesAndSteps) {
  onnx::GraphProto g;
  NameTable names;
  NodeBuilder b(&g, &names, 13);
  AddConstant(b, "scalar", MakeTensor<float>("", {}, {1.f}));
  AddConstant(b, "k", MakeTensor<float>("", {2, 3}, {0, 1, 2, 3, 4, 5}));
  b.Add("Gather", {"scalar", b.Ints64({0})}, {"gather_scalar"});
  b.Add("Gather", {"k", b.Ints64({2})}, {"gather_index"});
  SetAttr(b.Add("Gather", {"k", b.Ints64({0})}, {"gather_axis"}), "axis", static_cast<int64_t>(2));
  SetAttr(b.Add("Transpose", {"k"}, {"perm_repeat"}), "perm", std::vector<int64_t>{0, 0});
  SetAttr(b.Add("Transpose", {"k"}, {"perm_short"}), "perm", std::vector<int64_t>{0});
  b.Op("Slice", {"k", b.Ints64({0}), b.Ints64({3}), b.Ints64({1}), b.Ints64({0})}, "step_zero");
  b.Op("Slice", {"k", b.Ints64({0}), b.Ints64({3}), b.Ints64({5})}, "slice_axis");
  b.Op("Unsqueeze", {"k", b.Ints64({7})}, "unsqueeze_axis");
  b.Op("Reshape", {"k", b.Ints64({0, 0, 0})}, "reshape_copy");
  SetAttr(b.Add("Concat", {"k", "scalar"}, {"concat_rank"}), "axis", static_cast<int64_t>(0));
  GraphScope scope{&g, nullptr, "main"};
  for (const char* name : {"gather_scalar", "gather_index", "gather_axis", "perm_repeat", "perm_short", "step_zero",
                           "slice_axis", "unsqueeze_axis", "reshape_copy", "concat_rank"})
    EXPECT_FALSE(FoldConstant(scope, name).ok()) << name;
  // A step of INT64_MAX takes one element (no overflow).
  b.Op("Slice", {"k", b.Ints64({1}), b.Ints64({3}), b.Ints64({1}), b.Ints64({INT64_MAX})}, "big_step");
  auto big = FoldConstant(scope, "big_step");
  ASSERT_TRUE(big.ok()) << big.message();
  EXPECT_EQ(*ReadTensor<float>(big->tensor()), (std::vector<float>{1, 4}));
}

}  // namespace
}  // namespace nuphar
