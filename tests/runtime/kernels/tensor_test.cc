// Tensor (data movement and shape) kernels: corners the ONNX backend tests miss — negative
// axes, empty tensors, clamping, opset-dependent forms, reductions, load-time refusals —
// checked against plain loops or hand-computed values.
#include <gtest/gtest.h>

#include <algorithm>
#include <functional>
#include <numeric>
#include <random>

#include "runtime/core/tensor_proto.h"
#include "runtime/kernels/tensor/tensor_common.h"
#include "runtime/session.h"
#include "tests/modellib/model_builder.h"

namespace nuphar {
namespace {

using testing::AddNode;
using testing::MakeModel;
using testing::MakeValueInfo;
using testing::SetAttr;

// Builds a one-node model whose inputs are graph inputs named in0, in1, ... (absent when the
// tensor is undefined) and runs it; returns the outputs out0..out{n-1}.
// Inputs listed in `constant_inputs` are initializers instead (known to the kernel at load time).
Expected<std::vector<Tensor>> RunNode(const std::string& op, int opset, const std::vector<Tensor>& inputs,
                                      const std::function<void(onnx::NodeProto&)>& attrs = nullptr,
                                      int num_outputs = 1, const std::vector<size_t>& constant_inputs = {}) {
  onnx::GraphProto g;
  g.set_name("main");
  std::vector<std::string> in_names, out_names;
  NamedTensors feeds;
  for (size_t i = 0; i < inputs.size(); ++i) {
    if (!inputs[i].defined()) {
      in_names.push_back("");
      continue;
    }
    const std::string name = "in" + std::to_string(i);
    in_names.push_back(name);
    if (std::find(constant_inputs.begin(), constant_inputs.end(), i) != constant_inputs.end()) {
      *g.add_initializer() = TensorToProto(inputs[i], name);
      continue;
    }
    std::vector<testing::Dim> dims(inputs[i].shape().begin(), inputs[i].shape().end());
    *g.add_input() = MakeValueInfo(name, inputs[i].dtype(), dims);
    feeds.emplace_back(name, inputs[i]);
  }
  for (int o = 0; o < num_outputs; ++o) {
    out_names.push_back("out" + std::to_string(o));
    auto* vi = g.add_output();
    vi->set_name(out_names.back());
  }
  auto& node = AddNode(g, op, in_names, out_names, "node");
  if (attrs) attrs(node);
  auto session = Session::CreateFromModel(MakeModel(g, opset));
  if (!session) return session.status();
  return (*session)->Run(feeds);
}

template <class T>
std::vector<T> Values(const Tensor& t) {
  return std::vector<T>(t.data<T>(), t.data<T>() + t.size());
}

Tensor Iota(std::vector<int64_t> shape) {
  std::vector<float> v(static_cast<size_t>(NumElements(shape)));
  std::iota(v.begin(), v.end(), 0.0f);
  return Tensor::FromVector<float>(std::move(shape), v);
}

Tensor I64(std::vector<int64_t> v) { return Tensor::FromVector<int64_t>({static_cast<int64_t>(v.size())}, v); }

// ---- the copy primitives against plain loops ----

TEST(TensorCommonTest, StridedCopyMatchesNaiveTransposeForAllWidths) {
  std::mt19937 rng(7);
  const std::vector<int64_t> shape{2, 3, 1, 4};
  const std::vector<std::vector<int64_t>> perms{{3, 2, 1, 0}, {0, 2, 1, 3}, {1, 3, 0, 2}, {0, 1, 2, 3}};
  for (size_t width : {size_t{1}, size_t{2}, size_t{4}, size_t{8}}) {
    const int64_t n = NumElements(shape);
    std::vector<uint8_t> src(static_cast<size_t>(n) * width);
    for (auto& b : src) b = static_cast<uint8_t>(rng());
    const auto in_strides = tensor_kernels::ContiguousStrides(shape);
    for (const auto& perm : perms) {
      std::vector<int64_t> out_shape, strides;
      for (int64_t p : perm) {
        out_shape.push_back(shape[static_cast<size_t>(p)]);
        strides.push_back(in_strides[static_cast<size_t>(p)]);
      }
      std::vector<uint8_t> dst(src.size());
      tensor_kernels::StridedCopy(dst.data(), src.data(), out_shape, strides, width);
      // Naive: walk output coordinates.
      std::vector<int64_t> c(4, 0);
      for (int64_t i = 0; i < n; ++i) {
        int64_t off = 0;
        for (size_t k = 0; k < 4; ++k) off += c[k] * strides[k];
        ASSERT_EQ(0, std::memcmp(&dst[static_cast<size_t>(i) * width], &src[static_cast<size_t>(off) * width], width))
            << "width " << width << " element " << i;
        for (size_t k = 4; k-- > 0;) {
          if (++c[k] < out_shape[k]) break;
          c[k] = 0;
        }
      }
    }
  }
}

TEST(TensorCommonTest, IndexMapCopyFillsNegativeEntries) {
  const std::vector<int32_t> src{1, 2, 3, 4, 5, 6};  // [2, 3]
  const std::vector<std::vector<int64_t>> maps{{-1, 0, 3}, {2, -1, 0}};
  std::vector<int32_t> dst(9, 0);
  const int32_t fill = 99;
  tensor_kernels::IndexMapCopy(dst.data(), src.data(), maps, sizeof(int32_t), &fill);
  EXPECT_EQ(dst, (std::vector<int32_t>{99, 99, 99, 3, 99, 1, 6, 99, 4}));
}

// ---- shape ops ----

TEST(TensorKernelsTest, ReshapeZeroCopiesDimUnlessAllowzero) {
  auto out = RunNode("Reshape", 14, {Iota({2, 0, 3}), I64({0, -1})});
  // 0 copies dim 0 (2); -1 cannot be inferred from 0 elements with a zero product... 2*x = 0.
  ASSERT_TRUE(out.ok()) << out.message();
  EXPECT_EQ((*out)[0].shape(), (std::vector<int64_t>{2, 0}));
  auto zero = RunNode("Reshape", 14, {Iota({0, 3}), I64({3, 0})}, [](onnx::NodeProto& n) { SetAttr(n, "allowzero", int64_t{1}); });
  ASSERT_TRUE(zero.ok()) << zero.message();
  EXPECT_EQ((*zero)[0].shape(), (std::vector<int64_t>{3, 0}));
  auto bad = RunNode("Reshape", 14, {Iota({2, 3}), I64({-1, -1})});
  ASSERT_FALSE(bad.ok());
  EXPECT_NE(bad.message().find("more than one -1"), std::string::npos) << bad.message();
}

TEST(TensorKernelsTest, SqueezeAndUnsqueezeTakeAttributesBeforeOpset13) {
  auto sq = RunNode("Squeeze", 11, {Iota({1, 3, 1})}, [](onnx::NodeProto& n) { SetAttr(n, "axes", std::vector<int64_t>{-1}); });
  ASSERT_TRUE(sq.ok()) << sq.message();
  EXPECT_EQ((*sq)[0].shape(), (std::vector<int64_t>{1, 3}));
  auto all = RunNode("Squeeze", 13, {Iota({1, 3, 1})});
  ASSERT_TRUE(all.ok()) << all.message();
  EXPECT_EQ((*all)[0].shape(), (std::vector<int64_t>{3}));
  auto un = RunNode("Unsqueeze", 13, {Iota({3}), I64({-1, 0})});
  ASSERT_TRUE(un.ok()) << un.message();
  EXPECT_EQ((*un)[0].shape(), (std::vector<int64_t>{1, 3, 1}));
  auto bad = RunNode("Squeeze", 13, {Iota({2, 3}), I64({0})});
  ASSERT_FALSE(bad.ok());
  EXPECT_NE(bad.message().find("cannot squeeze"), std::string::npos) << bad.message();
}

// Axes that are an initializer are read at load; the results and errors are those of fed axes,
// and shapes above the kernel's inline rank (16) take its heap path.
TEST(TensorKernelsTest, SqueezeAndUnsqueezeWithConstantAxesMatchFedAxes) {
  struct Case {
    const char* op;
    Tensor x, axes;
  };
  const std::vector<Case> cases = {
      {"Unsqueeze", Iota({3}), I64({-1, 0})},
      {"Unsqueeze", Iota({2, 3}), I64({1})},
      {"Squeeze", Iota({1, 3, 1}), I64({2})},
      {"Unsqueeze", Iota(std::vector<int64_t>(15, 1)), I64({0, 16})},  // output rank 17
      {"Squeeze", Iota(std::vector<int64_t>(18, 1)), I64({3, -1})},
  };
  for (size_t i = 0; i < cases.size(); ++i) {
    const Case& c = cases[i];
    auto fed = RunNode(c.op, 13, {c.x, c.axes});
    auto constant = RunNode(c.op, 13, {c.x, c.axes}, nullptr, 1, {1});
    ASSERT_TRUE(fed.ok()) << fed.message();
    ASSERT_TRUE(constant.ok()) << constant.message();
    EXPECT_EQ((*constant)[0].shape(), (*fed)[0].shape()) << "case " << i;
    EXPECT_EQ(Values<float>((*constant)[0]), Values<float>(c.x)) << "case " << i;
  }
  auto repeated = RunNode("Unsqueeze", 13, {Iota({3}), I64({0, -3})}, nullptr, 1, {1});
  ASSERT_FALSE(repeated.ok());
  EXPECT_NE(repeated.message().find("repeated"), std::string::npos) << repeated.message();
  auto not_one = RunNode("Squeeze", 13, {Iota({2, 3}), I64({0})}, nullptr, 1, {1});
  ASSERT_FALSE(not_one.ok());
  EXPECT_NE(not_one.message().find("cannot squeeze"), std::string::npos) << not_one.message();
}

TEST(TensorKernelsTest, ShapeClampsStartAndEnd) {
  auto out = RunNode("Shape", 15, {Iota({2, 3, 4})}, [](onnx::NodeProto& n) {
    SetAttr(n, "start", int64_t{-10});
    SetAttr(n, "end", int64_t{-1});
  });
  ASSERT_TRUE(out.ok()) << out.message();
  EXPECT_EQ(Values<int64_t>((*out)[0]), (std::vector<int64_t>{2, 3}));
}

// ---- slice / pad ----

TEST(TensorKernelsTest, SliceNegativeStepClampsToBothEnds) {
  // x[::-2] over 7 elements with start=INT64_MAX, end=INT64_MIN: 6, 4, 2, 0.
  auto out = RunNode("Slice", 13, {Iota({7}), I64({INT64_MAX}), I64({INT64_MIN}), I64({0}), I64({-2})});
  ASSERT_TRUE(out.ok()) << out.message();
  EXPECT_EQ(Values<float>((*out)[0]), (std::vector<float>{6, 4, 2, 0}));
  auto empty = RunNode("Slice", 13, {Iota({3, 4}), I64({2}), I64({1}), I64({-1})});
  ASSERT_TRUE(empty.ok()) << empty.message();
  EXPECT_EQ((*empty)[0].shape(), (std::vector<int64_t>{3, 0}));
}

// Parameters that are initializers are read at load; results and errors are those of fed
// parameters, also without axes or steps, above the kernel's inline rank (16), and with one
// parameter fed while the others are constant.
TEST(TensorKernelsTest, SliceWithConstantParametersMatchesFedParameters) {
  std::vector<int64_t> deep(17, 1);
  deep[16] = 5;
  const std::vector<std::vector<Tensor>> cases = {
      {Iota({7}), I64({INT64_MAX}), I64({INT64_MIN}), I64({0}), I64({-2})},
      {Iota({3, 4}), I64({1, -3}), I64({3, 100}), I64({0, 1}), I64({1, 2})},
      {Iota({3, 4}), I64({1}), I64({-1})},                      // no axes, no steps
      {Iota({2, 6}), I64({4}), I64({1}), I64({-1}), I64({-1})},  // backwards
      {Iota(deep), I64({1}), I64({4}), I64({-1})},               // rank 17
  };
  for (size_t i = 0; i < cases.size(); ++i) {
    std::vector<size_t> all, some;
    for (size_t k = 1; k < cases[i].size(); ++k) {
      all.push_back(k);
      if (k != 2) some.push_back(k);
    }
    auto fed = RunNode("Slice", 13, cases[i]);
    ASSERT_TRUE(fed.ok()) << fed.message();
    for (const auto& constant_inputs : {all, some}) {
      auto constant = RunNode("Slice", 13, cases[i], nullptr, 1, constant_inputs);
      ASSERT_TRUE(constant.ok()) << constant.message();
      EXPECT_EQ((*constant)[0].shape(), (*fed)[0].shape()) << "case " << i;
      EXPECT_EQ(Values<float>((*constant)[0]), Values<float>((*fed)[0])) << "case " << i;
    }
  }
  for (size_t constant : {size_t{0}, size_t{1}}) {
    std::vector<size_t> inputs;
    if (constant) inputs = {1, 2, 3};
    auto lengths = RunNode("Slice", 13, {Iota({3, 4}), I64({1, 1}), I64({2}), I64({0, 1})}, nullptr, 1, inputs);
    ASSERT_FALSE(lengths.ok());
    EXPECT_NE(lengths.message().find("different lengths"), std::string::npos) << lengths.message();
    auto repeated = RunNode("Slice", 13, {Iota({3, 4}), I64({0, 0}), I64({1, 1}), I64({1, -1})}, nullptr, 1, inputs);
    ASSERT_FALSE(repeated.ok());
    EXPECT_NE(repeated.message().find("repeated"), std::string::npos) << repeated.message();
  }
}

TEST(TensorKernelsTest, SliceOpset1UsesAttributes) {
  auto out = RunNode("Slice", 9, {Iota({3, 4})}, [](onnx::NodeProto& n) {
    SetAttr(n, "starts", std::vector<int64_t>{1, -2});
    SetAttr(n, "ends", std::vector<int64_t>{1000, 1000});
  });
  ASSERT_TRUE(out.ok()) << out.message();
  EXPECT_EQ(Values<float>((*out)[0]), (std::vector<float>{6, 7, 10, 11}));
}

TEST(TensorKernelsTest, PadModesAndCropping) {
  auto pads = I64({0, 2, 0, -1});  // dim 1: 2 before, crop 1 after
  auto reflect = RunNode("Pad", 13, {Iota({1, 4}), pads}, [](onnx::NodeProto& n) { SetAttr(n, "mode", std::string("reflect")); });
  ASSERT_TRUE(reflect.ok()) << reflect.message();
  EXPECT_EQ(Values<float>((*reflect)[0]), (std::vector<float>{2, 1, 0, 1, 2}));
  auto edge = RunNode("Pad", 13, {Iota({1, 4}), pads}, [](onnx::NodeProto& n) { SetAttr(n, "mode", std::string("edge")); });
  ASSERT_TRUE(edge.ok()) << edge.message();
  EXPECT_EQ(Values<float>((*edge)[0]), (std::vector<float>{0, 0, 0, 1, 2}));
  auto constant = RunNode("Pad", 13, {Iota({1, 4}), pads, Tensor::Scalar<float>(-5)});
  ASSERT_TRUE(constant.ok()) << constant.message();
  EXPECT_EQ(Values<float>((*constant)[0]), (std::vector<float>{-5, -5, 0, 1, 2}));
  // Opset 2 attributes; the float value converts to the int32 data type.
  auto legacy = RunNode("Pad", 2, {Tensor::FromVector<int32_t>({2}, {7, 8})}, [](onnx::NodeProto& n) {
    SetAttr(n, "pads", std::vector<int64_t>{1, 1});
    SetAttr(n, "value", 3.0f);
  });
  ASSERT_TRUE(legacy.ok()) << legacy.message();
  EXPECT_EQ(Values<int32_t>((*legacy)[0]), (std::vector<int32_t>{3, 7, 8, 3}));
}

// ---- concat / split ----

TEST(TensorKernelsTest, ConcatAcceptsEmptyPiecesAndNegativeAxis) {
  auto out = RunNode("Concat", 13, {Iota({2, 0}), Iota({2, 2})}, [](onnx::NodeProto& n) { SetAttr(n, "axis", int64_t{-1}); });
  ASSERT_TRUE(out.ok()) << out.message();
  EXPECT_EQ(Values<float>((*out)[0]), (std::vector<float>{0, 1, 2, 3}));
}

TEST(TensorKernelsTest, SplitFormsByOpset) {
  auto attr = RunNode("Split", 11, {Iota({5})}, [](onnx::NodeProto& n) { SetAttr(n, "split", std::vector<int64_t>{2, 3}); }, 2);
  ASSERT_TRUE(attr.ok()) << attr.message();
  EXPECT_EQ(Values<float>((*attr)[1]), (std::vector<float>{2, 3, 4}));
  auto input = RunNode("Split", 13, {Iota({5}), I64({4, 1})}, nullptr, 2);
  ASSERT_TRUE(input.ok()) << input.message();
  EXPECT_EQ(Values<float>((*input)[0]), (std::vector<float>{0, 1, 2, 3}));
  auto uneven = RunNode("Split", 13, {Iota({5})}, nullptr, 2);
  ASSERT_FALSE(uneven.ok());
  EXPECT_NE(uneven.message().find("equal parts"), std::string::npos) << uneven.message();
}

// ---- gather / scatter ----

TEST(TensorKernelsTest, GatherRejectsOutOfRangeIndex) {
  auto ok = RunNode("Gather", 13, {Iota({3, 2}), Tensor::FromVector<int32_t>({2}, {-1, 0})});
  ASSERT_TRUE(ok.ok()) << ok.message();
  EXPECT_EQ(Values<float>((*ok)[0]), (std::vector<float>{4, 5, 0, 1}));
  auto bad = RunNode("Gather", 13, {Iota({3, 2}), I64({3})});
  ASSERT_FALSE(bad.ok());
  EXPECT_NE(bad.message().find("out of range"), std::string::npos) << bad.message();
}

TEST(TensorKernelsTest, GatherNDWithBatchDims) {
  // data [2, 2, 2], batch_dims 1, indices [2, 1]: picks data[b, idx[b]].
  auto out = RunNode("GatherND", 13, {Iota({2, 2, 2}), Tensor::FromVector<int64_t>({2, 1}, {1, 0})},
                     [](onnx::NodeProto& n) { SetAttr(n, "batch_dims", int64_t{1}); });
  ASSERT_TRUE(out.ok()) << out.message();
  EXPECT_EQ((*out)[0].shape(), (std::vector<int64_t>{2, 2}));
  EXPECT_EQ(Values<float>((*out)[0]), (std::vector<float>{2, 3, 4, 5}));
}

TEST(TensorKernelsTest, ScatterElementsReductions) {
  const Tensor data = Tensor::FromVector<float>({1, 3}, {1, 2, 3});
  const Tensor idx = Tensor::FromVector<int64_t>({1, 2}, {1, -2});
  const Tensor upd = Tensor::FromVector<float>({1, 2}, {10, 5});
  auto add = RunNode("ScatterElements", 16, {data, idx, upd}, [](onnx::NodeProto& n) {
    SetAttr(n, "axis", int64_t{1});
    SetAttr(n, "reduction", std::string("add"));
  });
  ASSERT_TRUE(add.ok()) << add.message();
  EXPECT_EQ(Values<float>((*add)[0]), (std::vector<float>{1, 17, 3}));
  auto none = RunNode("ScatterElements", 16, {data, idx, upd}, [](onnx::NodeProto& n) { SetAttr(n, "axis", int64_t{1}); });
  ASSERT_TRUE(none.ok()) << none.message();
  EXPECT_EQ(Values<float>((*none)[0]), (std::vector<float>{1, 5, 3}));  // last duplicate wins
}

TEST(TensorKernelsTest, ScatterNDMultiplySlices) {
  auto out = RunNode("ScatterND", 16,
                     {Iota({2, 2}), Tensor::FromVector<int64_t>({1, 1}, {1}), Tensor::FromVector<float>({1, 2}, {10, 10})},
                     [](onnx::NodeProto& n) { SetAttr(n, "reduction", std::string("mul")); });
  ASSERT_TRUE(out.ok()) << out.message();
  EXPECT_EQ(Values<float>((*out)[0]), (std::vector<float>{0, 1, 20, 30}));
}

// Constant indices that enumerate a box (a cache update `data[1:2, :, 1:3] = u`) take a block
// copy (tensor_scatter.cc IndexBox); it must give the tuple walk's results, which the same
// indices fed at run time get, for every reduction, slices of one element and of several, and
// the walk's error when the box leaves the data. Tuples in another order are no box.
TEST(TensorKernelsTest, ScatterNDConstantBoxMatchesTheTupleWalk) {
  auto box_indices = [](std::vector<int64_t> lead, std::vector<int64_t> lo, std::vector<int64_t> len) {
    std::vector<int64_t> v, at(lo.size(), 0);
    int64_t tuples = 1;
    for (int64_t n : len) tuples *= n;
    for (int64_t t = 0; t < tuples; ++t) {
      for (size_t c = 0; c < lo.size(); ++c) v.push_back(lo[c] + at[c]);
      for (size_t c = lo.size(); c-- > 0;) {
        if (++at[c] < len[c]) break;
        at[c] = 0;
      }
    }
    lead.push_back(static_cast<int64_t>(lo.size()));
    return Tensor::FromVector<int64_t>(lead, v);
  };
  auto updates = [](std::vector<int64_t> shape) {
    Tensor t = Iota(std::move(shape));
    for (int64_t i = 0; i < t.size(); ++i) t.data<float>()[i] = 1000.0f + 3.0f * t.data<float>()[i];
    return t;
  };
  struct Case {
    Tensor indices, updates;
  };
  Tensor reversed = box_indices({6}, {1, 0, 1}, {1, 3, 2});
  std::reverse(reversed.data<int64_t>(), reversed.data<int64_t>() + 6 * 3);
  for (int64_t t = 0; t < 6; ++t) std::reverse(reversed.data<int64_t>() + 3 * t, reversed.data<int64_t>() + 3 * t + 3);
  const std::vector<Case> cases = {
      {box_indices({3, 2}, {1, 0, 1}, {1, 3, 2}), updates({3, 2, 5})},     // slices of 5
      {box_indices({1, 2, 3, 5}, {0, 1, 0, 0}, {2, 1, 3, 5}), updates({1, 2, 3, 5})},  // k = rank
      {box_indices({1}, {1}, {1}), updates({1, 3, 4, 5})},                 // one tuple
      {reversed, updates({6, 5})},                                         // no box: the walk
  };
  for (const char* reduction : {"none", "add", "max"}) {
    auto attrs = [&](onnx::NodeProto& n) { SetAttr(n, "reduction", std::string(reduction)); };
    for (size_t i = 0; i < cases.size(); ++i) {
      const std::vector<Tensor> inputs = {Iota({2, 3, 4, 5}), cases[i].indices, cases[i].updates};
      auto fed = RunNode("ScatterND", 18, inputs, attrs);
      auto constant = RunNode("ScatterND", 18, inputs, attrs, 1, {1});
      ASSERT_TRUE(fed.ok()) << fed.message();
      ASSERT_TRUE(constant.ok()) << constant.message();
      EXPECT_EQ(Values<float>((*constant)[0]), Values<float>((*fed)[0])) << reduction << " case " << i;
      EXPECT_NE(Values<float>((*constant)[0]), Values<float>(Iota({2, 3, 4, 5}))) << reduction << " case " << i;
    }
  }
  // A box past the end of dim 2 (3 + 2 > 4): the walk's error, not a write past the data.
  auto outside = RunNode("ScatterND", 16, {Iota({2, 3, 4}), box_indices({2}, {1, 2, 3}, {1, 1, 2}), updates({2})},
                         nullptr, 1, {1});
  ASSERT_FALSE(outside.ok());
  EXPECT_NE(outside.message().find("out of range"), std::string::npos) << outside.message();
}

// ---- layout / generate ----

// Transpose against an index-by-index loop: explicit and default (reversing) perms, identity,
// perms that move only unit dims (the input under another shape) or unit dims and the others,
// and ranks above the kernel's inline 16 dims.
TEST(TensorKernelsTest, TransposeMatchesNaiveIndexLoop) {
  auto naive = [](const Tensor& x, const std::vector<int64_t>& perm) {
    const size_t r = perm.size();
    std::vector<int64_t> in_strides(r, 1), out_shape(r);
    for (size_t k = r; k-- > 1;) in_strides[k - 1] = in_strides[k] * x.dim(static_cast<int64_t>(k));
    for (size_t k = 0; k < r; ++k) out_shape[k] = x.dim(perm[k]);
    std::vector<float> out;
    std::vector<int64_t> at(r, 0);
    for (int64_t i = 0; i < x.size(); ++i) {
      int64_t src = 0;
      for (size_t k = 0; k < r; ++k) src += at[k] * in_strides[static_cast<size_t>(perm[k])];
      out.push_back(x.data<float>()[src]);
      for (size_t k = r; k-- > 0;) {
        if (++at[k] < out_shape[k]) break;
        at[k] = 0;
      }
    }
    return out;
  };
  std::vector<int64_t> deep(17, 1), deep_perm(17);
  deep[2] = 2, deep[9] = 3, deep[16] = 4;
  std::iota(deep_perm.begin(), deep_perm.end(), 0);
  std::swap(deep_perm[2], deep_perm[16]);
  std::swap(deep_perm[0], deep_perm[9]);
  struct Case {
    std::vector<int64_t> shape, perm;  // empty perm: the default
  };
  for (const Case& c : std::vector<Case>{{{2, 3, 4}, {1, 2, 0}}, {{2, 3, 4}, {}}, {{2, 3}, {0, 1}}, {deep, deep_perm}, {deep, {}},
                                          {{5, 1, 1, 4}, {0, 2, 1, 3}}, {{1, 5, 4}, {1, 0, 2}}, {{5, 1, 4}, {1, 0, 2}},
                                          {{5, 1, 4}, {2, 1, 0}}, {{1, 1}, {1, 0}}, {{5, 0, 1}, {2, 0, 1}}}) {
    const Tensor x = Iota(c.shape);
    auto out = RunNode("Transpose", 13, {x}, [&](onnx::NodeProto& n) {
      if (!c.perm.empty()) SetAttr(n, "perm", c.perm);
    });
    ASSERT_TRUE(out.ok()) << out.message();
    std::vector<int64_t> perm = c.perm;
    if (perm.empty())
      for (int64_t k = static_cast<int64_t>(c.shape.size()); k-- > 0;) perm.push_back(k);
    EXPECT_EQ(Values<float>((*out)[0]), naive(x, perm)) << ShapeToString(c.shape);
    std::vector<int64_t> out_shape;
    for (int64_t p : perm) out_shape.push_back(c.shape[static_cast<size_t>(p)]);
    EXPECT_EQ((*out)[0].shape(), out_shape) << ShapeToString(c.shape);
  }
}

TEST(TensorKernelsTest, ExpandBroadcastsBothWays) {
  auto out = RunNode("Expand", 13, {Iota({3, 1}), I64({2, 1, 2})});
  ASSERT_TRUE(out.ok()) << out.message();
  EXPECT_EQ((*out)[0].shape(), (std::vector<int64_t>{2, 3, 2}));
  EXPECT_EQ(Values<float>((*out)[0]), (std::vector<float>{0, 0, 1, 1, 2, 2, 0, 0, 1, 1, 2, 2}));
}

TEST(TensorKernelsTest, DepthToSpaceInvertsSpaceToDepth) {
  const Tensor x = Iota({1, 2, 4, 6});
  auto s2d = RunNode("SpaceToDepth", 13, {x}, [](onnx::NodeProto& n) { SetAttr(n, "blocksize", int64_t{2}); });
  ASSERT_TRUE(s2d.ok()) << s2d.message();
  EXPECT_EQ((*s2d)[0].shape(), (std::vector<int64_t>{1, 8, 2, 3}));
  auto perm = RunNode("Transpose", 13, {Iota({2, 3})}, [](onnx::NodeProto& n) { SetAttr(n, "perm", std::vector<int64_t>{0, 0}); });
  ASSERT_FALSE(perm.ok());
  EXPECT_NE(perm.message().find("not a permutation"), std::string::npos) << perm.message();
  auto rank = RunNode("Transpose", 13, {Iota({2, 3, 4})}, [](onnx::NodeProto& n) { SetAttr(n, "perm", std::vector<int64_t>{1, 0}); });
  ASSERT_FALSE(rank.ok());
  EXPECT_NE(rank.message().find("rank 3"), std::string::npos) << rank.message();
  auto d2s = RunNode("DepthToSpace", 13, {(*s2d)[0]}, [](onnx::NodeProto& n) { SetAttr(n, "blocksize", int64_t{2}); });
  ASSERT_TRUE(d2s.ok()) << d2s.message();
  EXPECT_EQ(Values<float>((*d2s)[0]), Values<float>(x));
}

TEST(TensorKernelsTest, NonZeroTreatsNegativeZeroAsZero) {
  auto out = RunNode("NonZero", 13, {Tensor::FromVector<float>({2, 2}, {-0.0f, 1.0f, 2.0f, 0.0f})});
  ASSERT_TRUE(out.ok()) << out.message();
  EXPECT_EQ((*out)[0].shape(), (std::vector<int64_t>{2, 2}));
  EXPECT_EQ(Values<int64_t>((*out)[0]), (std::vector<int64_t>{0, 1, 1, 0}));
}

TEST(TensorKernelsTest, RangeCountsCeil) {
  auto out = RunNode("Range", 11, {Tensor::Scalar<int64_t>(10), Tensor::Scalar<int64_t>(3), Tensor::Scalar<int64_t>(-3)});
  ASSERT_TRUE(out.ok()) << out.message();
  EXPECT_EQ(Values<int64_t>((*out)[0]), (std::vector<int64_t>{10, 7, 4}));
}

TEST(TensorKernelsTest, OneHotOutOfRangeRowStaysOff) {
  auto out = RunNode("OneHot", 11, {I64({1, 5, -1}), Tensor::Scalar<float>(3), Tensor::FromVector<int32_t>({2}, {0, 7})});
  ASSERT_TRUE(out.ok()) << out.message();
  EXPECT_EQ(Values<int32_t>((*out)[0]), (std::vector<int32_t>{0, 7, 0, 0, 0, 0, 0, 0, 7}));
}

// ---- resize ----

TEST(TensorKernelsTest, ResizeLinearHalfPixelMatchesHandValues) {
  // 1-D [0, 1] upsampled x2 with half_pixel: x_ori = -0.25, 0.25, 0.75, 1.25 -> clamp at edges.
  auto out = RunNode("Resize", 13,
                     {Tensor::FromVector<float>({1, 2}, {0, 1}), Tensor(), Tensor::FromVector<float>({2}, {1, 2})},
                     [](onnx::NodeProto& n) { SetAttr(n, "mode", std::string("linear")); });
  ASSERT_TRUE(out.ok()) << out.message();
  EXPECT_EQ(Values<float>((*out)[0]), (std::vector<float>{0, 0.25f, 0.75f, 1}));
}

TEST(TensorKernelsTest, ResizeRoundsAndSaturatesUint8) {
  auto out = RunNode("Resize", 13,
                     {Tensor::FromVector<uint8_t>({1, 2}, {0, 255}), Tensor(), Tensor::FromVector<float>({2}, {1, 4})},
                     [](onnx::NodeProto& n) { SetAttr(n, "mode", std::string("cubic")); });
  ASSERT_TRUE(out.ok()) << out.message();
  ASSERT_EQ((*out)[0].size(), 8);
  EXPECT_EQ(Values<uint8_t>((*out)[0]).front(), 0);  // cubic overshoot below 0 saturates
  EXPECT_EQ(Values<uint8_t>((*out)[0]).back(), 255);
}

TEST(TensorKernelsTest, UpsampleOpset7NearestRepeats) {
  auto out = RunNode("Upsample", 7, {Iota({1, 2})}, [](onnx::NodeProto& n) {
    auto* a = n.add_attribute();
    a->set_name("scales");
    a->set_type(onnx::AttributeProto::FLOATS);
    a->add_floats(1);
    a->add_floats(3);
  });
  ASSERT_TRUE(out.ok()) << out.message();
  EXPECT_EQ(Values<float>((*out)[0]), (std::vector<float>{0, 0, 0, 1, 1, 1}));
}

// ---- load-time refusals ----

TEST(TensorKernelsTest, RefusesUnsupportedAttributesAtLoad) {
  auto pad = RunNode("Pad", 13, {Iota({2}), I64({1, 1})}, [](onnx::NodeProto& n) { SetAttr(n, "mode", std::string("wrap")); });
  ASSERT_FALSE(pad.ok());
  EXPECT_NE(pad.message().find("'wrap'"), std::string::npos) << pad.message();
  auto resize = RunNode("Resize", 13, {Iota({2}), Tensor(), Tensor::FromVector<float>({1}, {2})},
                        [](onnx::NodeProto& n) { SetAttr(n, "coordinate_transformation_mode", std::string("magic")); });
  ASSERT_FALSE(resize.ok());
  EXPECT_NE(resize.message().find("magic"), std::string::npos) << resize.message();
  auto perm = RunNode("Transpose", 13, {Iota({2, 3})}, [](onnx::NodeProto& n) { SetAttr(n, "perm", std::vector<int64_t>{0, 0}); });
  ASSERT_FALSE(perm.ok());
  EXPECT_NE(perm.message().find("not a permutation"), std::string::npos) << perm.message();
  auto rank = RunNode("Transpose", 13, {Iota({2, 3, 4})}, [](onnx::NodeProto& n) { SetAttr(n, "perm", std::vector<int64_t>{1, 0}); });
  ASSERT_FALSE(rank.ok());
  EXPECT_NE(rank.message().find("rank 3"), std::string::npos) << rank.message();
  auto d2s = RunNode("DepthToSpace", 13, {Iota({1, 4, 1, 1})}, [](onnx::NodeProto& n) { SetAttr(n, "blocksize", int64_t{0}); });
  ASSERT_FALSE(d2s.ok());
  EXPECT_NE(d2s.message().find("blocksize"), std::string::npos) << d2s.message();
}

}  // namespace
}  // namespace nuphar
