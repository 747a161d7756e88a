// Generated elementwise kernels reading general broadcasts (Access::kStrided / kStridedColumn)
// against the reference executor on every codegen tier: gtcrn's [C, F] weights over [B, T, C, F],
// per-channel [C, 1, 1] over [N, C, H, W], two inputs broadcast on different dims, integer values,
// symbolic dims (two symbols for one size among them), the fallback when the actual shape
// contradicts the declared access, and
// BatchNormalization's per-channel parameters (Access::kChannel).
#include <gtest/gtest.h>

#include <cstdint>

#include "graph/node_builder.h"
#include "tests/modellib/model_builder.h"
#include "tests/runtime/jit/jit_test_util.h"

namespace nuphar {
namespace {

using testing::AddNode;
using testing::kCodegenTiers;
using testing::TierSettings;
using testing::Dim;
using testing::ExpectBitIdentical;
using testing::MakeModel;
using testing::MakeValueInfo;
using testing::Random;

// y = (x * w + b) with x [B, T, C, F] and w, b of `param` dims, T symbolic.
void ExpectParamBroadcastIdentical(const std::vector<Dim>& param, const std::vector<int64_t>& param_shape) {
  onnx::GraphProto g;
  g.set_name("g");
  const std::vector<Dim> x_dims = {int64_t{2}, std::string("T"), int64_t{3}, int64_t{33}};
  *g.add_input() = MakeValueInfo("x", DType::kFloat, x_dims);
  for (const char* n : {"w", "b"}) *g.add_input() = MakeValueInfo(n, DType::kFloat, param);
  *g.add_output() = MakeValueInfo("y", DType::kFloat, x_dims);
  *g.add_value_info() = MakeValueInfo("m", DType::kFloat, x_dims);
  AddNode(g, "Mul", {"x", "w"}, {"m"});
  AddNode(g, "Add", {"m", "b"}, {"y"});
  const onnx::ModelProto model = MakeModel(g, 13);
  for (const char* tier : kCodegenTiers)
    for (int64_t t : {1, 5}) {
      SCOPED_TRACE(std::string(tier) + " T=" + std::to_string(t));
      ExpectBitIdentical(model, {{"x", Random({2, t, 3, 33}, 1)}, {"w", Random(param_shape, 2)}, {"b", Random(param_shape, 3)}},
                         2, TierSettings(tier));
    }
}

TEST(JitBroadcast, WeightOverTheLastTwoDims) { ExpectParamBroadcastIdentical({int64_t{3}, int64_t{33}}, {3, 33}); }
TEST(JitBroadcast, PerChannelColumn) { ExpectParamBroadcastIdentical({int64_t{3}, int64_t{1}}, {3, 1}); }
TEST(JitBroadcast, LeadingAndInnerDims) {
  ExpectParamBroadcastIdentical({int64_t{2}, int64_t{1}, int64_t{3}, int64_t{33}}, {2, 1, 3, 33});
}

// [B, 1, F] + [1, T, 1] -> [B, T, F]: neither input has the result's shape; int64 values.
TEST(JitBroadcast, TwoInputsBroadcastOnDifferentDims) {
  onnx::GraphProto g;
  g.set_name("g");
  *g.add_input() = MakeValueInfo("a", DType::kInt64, {int64_t{2}, int64_t{1}, int64_t{7}});
  *g.add_input() = MakeValueInfo("b", DType::kInt64, {int64_t{1}, std::string("T"), int64_t{1}});
  *g.add_input() = MakeValueInfo("c", DType::kInt64, {int64_t{2}, std::string("T"), int64_t{7}});
  *g.add_output() = MakeValueInfo("y", DType::kInt64, {int64_t{2}, std::string("T"), int64_t{7}});
  *g.add_value_info() = MakeValueInfo("s", DType::kInt64, {int64_t{2}, std::string("T"), int64_t{7}});
  AddNode(g, "Add", {"a", "b"}, {"s"});
  AddNode(g, "Mul", {"s", "c"}, {"y"});
  auto ints = [](const std::vector<int64_t>& shape, int64_t seed) {
    int64_t n = 1;
    for (int64_t d : shape) n *= d;
    std::vector<int64_t> v(static_cast<size_t>(n));
    for (int64_t i = 0; i < n; ++i) v[static_cast<size_t>(i)] = (i * 37 + seed) % 23 - 11;
    return Tensor::FromVector<int64_t>(shape, v);
  };
  for (const char* tier : kCodegenTiers)
    for (int64_t t : {1, 4}) {
      SCOPED_TRACE(std::string(tier) + " T=" + std::to_string(t));
      ExpectBitIdentical(MakeModel(g, 13), {{"a", ints({2, 1, 7}, 1)}, {"b", ints({1, t, 1}, 2)}, {"c", ints({2, t, 7}, 3)}}, 2,
                         TierSettings(tier));
    }
}

// Static shapes: the geometry is baked into the code as constants.
TEST(JitBroadcast, StaticShapesBakeTheGeometry) {
  onnx::GraphProto g;
  g.set_name("g");
  const std::vector<Dim> x_dims = {int64_t{2}, int64_t{3}, int64_t{4}, int64_t{33}};
  *g.add_input() = MakeValueInfo("x", DType::kFloat, x_dims);
  *g.add_input() = MakeValueInfo("w", DType::kFloat, {int64_t{3}, int64_t{1}, int64_t{33}});
  *g.add_input() = MakeValueInfo("c", DType::kFloat, {int64_t{2}, int64_t{1}, int64_t{4}, int64_t{1}});
  *g.add_output() = MakeValueInfo("y", DType::kFloat, x_dims);
  *g.add_value_info() = MakeValueInfo("m", DType::kFloat, x_dims);
  AddNode(g, "Mul", {"x", "w"}, {"m"});
  AddNode(g, "Sub", {"m", "c"}, {"y"});
  for (const char* tier : kCodegenTiers)
    ExpectBitIdentical(MakeModel(g, 13),
                       {{"x", Random({2, 3, 4, 33}, 4)}, {"w", Random({3, 1, 33}, 5)}, {"c", Random({2, 1, 4, 1}, 6)}}, 2,
                       TierSettings(tier));
}

// s = Sin(w) declared other than it is at run time: [3, 1] (a repeated column) but [3, 33], or
// [3, 33] (baked strides) but [1, 33]. The generated code does not fit, the reference runs it.
TEST(JitBroadcast, WrongDeclaredShapeFallsBackToTheReference) {
  for (const std::vector<int64_t>& declared : std::vector<std::vector<int64_t>>{{3, 1}, {3, 33}}) {
    const std::vector<int64_t> actual = declared[1] == 1 ? std::vector<int64_t>{3, 33} : std::vector<int64_t>{1, 33};
    onnx::GraphProto g;
    g.set_name("g");
    const std::vector<Dim> x_dims = {int64_t{2}, int64_t{3}, int64_t{33}};
    *g.add_input() = MakeValueInfo("x", DType::kFloat, x_dims);
    *g.add_input() = MakeValueInfo("w", DType::kFloat, {actual[0], actual[1]});
    *g.add_output() = MakeValueInfo("y", DType::kFloat, x_dims);
    *g.add_value_info() = MakeValueInfo("s", DType::kFloat, {declared[0], declared[1]});
    AddNode(g, "Sin", {"w"}, {"s"});
    AddNode(g, "Mul", {"x", "s"}, {"y"});
    for (const char* tier : kCodegenTiers)
      ExpectBitIdentical(MakeModel(g, 13), {{"x", Random({2, 3, 33}, 4)}, {"w", Random(actual, 5)}}, 1, TierSettings(tier));
  }
}

// Two symbols for one run-time size (an exporter's value_info named the frame count of
// openWakeWord's melspectrogram unk__0 on one operand and unk__2 on the other): the inputs are read
// as equal (both nodes generated, 2 JIT nodes; without the speculation the Add stayed with the
// reference). When the sizes agree the generated code runs; when b is in fact a broadcast [2, 1, 7]
// the call's shape check runs the reference. Both are bit-identical to the reference executor.
TEST(JitBroadcast, TwoSymbolsForOneSizeAreTakenAsEqual) {
  onnx::GraphProto g;
  g.set_name("g");
  *g.add_input() = MakeValueInfo("a", DType::kFloat, {int64_t{2}, std::string("unk__0"), int64_t{7}});
  *g.add_input() = MakeValueInfo("b", DType::kFloat, {int64_t{2}, std::string("unk__2"), int64_t{7}});
  *g.add_output() = MakeValueInfo("y", DType::kFloat, {int64_t{2}, std::string("unk__0"), int64_t{7}});
  *g.add_value_info() = MakeValueInfo("s", DType::kFloat, {int64_t{2}, std::string("unk__0"), int64_t{7}});
  AddNode(g, "Add", {"a", "b"}, {"s"});
  AddNode(g, "Mul", {"s", "a"}, {"y"});
  for (const char* tier : kCodegenTiers)
    for (int64_t b_frames : {5, 1}) {
      SCOPED_TRACE(std::string(tier) + " b frames " + std::to_string(b_frames));
      ExpectBitIdentical(MakeModel(g, 13), {{"a", Random({2, 5, 7}, 6)}, {"b", Random({2, b_frames, 7}, 7)}}, 2,
                         TierSettings(tier));
    }
}

// BatchNormalization (inference) as the reference computes it, per channel [C] over X of rank 2
// (a row), 3 and 4 (T symbolic), its parameters initializers or graph inputs, fused with the Relu
// after it; at opsets 9 and 15.
TEST(JitBroadcast, BatchNormalizationIsBitIdentical) {
  for (int opset : {9, 15})
    for (size_t rank : {2, 3, 4})
      for (bool constant_params : {true, false}) {
        SCOPED_TRACE("opset " + std::to_string(opset) + " rank " + std::to_string(rank) +
                     (constant_params ? " initializers" : " inputs"));
        const int64_t C = 5;
        std::vector<Dim> x_dims = {int64_t{2}, C, std::string("T"), int64_t{17}};
        x_dims.resize(rank);
        onnx::GraphProto g;
        g.set_name("g");
        *g.add_input() = MakeValueInfo("x", DType::kFloat, x_dims);
        *g.add_output() = MakeValueInfo("y", DType::kFloat, x_dims);
        *g.add_value_info() = MakeValueInfo("n", DType::kFloat, x_dims);
        NamedTensors feeds;
        uint32_t seed = 7;
        for (const char* p : {"scale", "bias", "mean", "var"}) {
          Tensor t = Random({C}, seed++, std::string(p) == "var" ? 0.f : -2.f, 2.f);
          if (constant_params) {
            auto* init = g.add_initializer();
            init->set_name(p);
            init->set_data_type(onnx::TensorProto::FLOAT);
            init->add_dims(C);
            for (int64_t k = 0; k < C; ++k) init->add_float_data(t.data<float>()[k]);
          } else {
            *g.add_input() = MakeValueInfo(p, DType::kFloat, {C});
            feeds.emplace_back(p, t);
          }
        }
        SetAttr(AddNode(g, "BatchNormalization", {"x", "scale", "bias", "mean", "var"}, {"n"}), "epsilon", 1e-3f);
        AddNode(g, "Relu", {"n"}, {"y"});
        const onnx::ModelProto model = MakeModel(g, opset);
        for (const char* tier : kCodegenTiers)
          for (int64_t t : {1, 6}) {
            SCOPED_TRACE(std::string(tier) + " T=" + std::to_string(t));
            std::vector<int64_t> shape = {2, C, t, 17};
            shape.resize(rank);
            NamedTensors run = feeds;
            run.emplace_back("x", Random(shape, 3));
            ExpectBitIdentical(model, run, 2, TierSettings(tier));
          }
      }
}

}  // namespace
}  // namespace nuphar
