// MatMul + constant bias Add -> MatMulAddBias (runtime/fusion/matmul_bias_fusion.h): which graphs
// are fused, and the fused node's outputs equal the unfused reference execution bit for bit on
// every ISA tier this CPU has (the packed GEMM adds the bias in its store, the other paths after).
#include <gtest/gtest.h>
#include <onnx/onnx_pb.h>

#include <cstring>
#include <string>
#include <unordered_map>

#include "runtime/core/tensor_proto.h"
#include "runtime/fusion/matmul_bias_fusion.h"
#include "runtime/platform/cpu_features.h"
#include "runtime/session.h"
#include "tests/modellib/model_builder.h"
#include "tests/modellib/random_tensor.h"

namespace nuphar {
namespace {

using testing::RandomTensor;

enum class Variant { kYFirst, kBiasFirst, kYAlsoOutput, kBias1xN, kBiasComputed };

// z = Add(MatMul(x[rows, K], W[K, N]), b): W constant, b as the variant says. N = 40 leaves a
// partial 32-column block.
onnx::ModelProto BiasModel(Variant v, int64_t rows, int opset = 13) {
  constexpr int64_t K = 7, N = 40;
  onnx::GraphProto g;
  using testing::Dim;
  *g.add_input() = testing::MakeValueInfo("x", DType::kFloat, {Dim{rows}, Dim{K}});
  *g.add_initializer() = TensorToProto(RandomTensor({K, N}, 3), "w");
  if (v == Variant::kBiasComputed) {
    *g.add_input() = testing::MakeValueInfo("b", DType::kFloat, {Dim{N}});
  } else {
    *g.add_initializer() = TensorToProto(RandomTensor(v == Variant::kBias1xN ? std::vector<int64_t>{1, N}
                                                                             : std::vector<int64_t>{N},
                                                      4),
                                         "b");
  }
  testing::AddNode(g, "MatMul", {"x", "w"}, {"y"}, "mm");
  if (v == Variant::kBiasFirst) testing::AddNode(g, "Add", {"b", "y"}, {"z"}, "add");
  else testing::AddNode(g, "Add", {"y", "b"}, {"z"}, "add");
  *g.add_output() = testing::MakeValueInfo("z", DType::kFloat, {Dim{rows}, Dim{N}});
  if (v == Variant::kYAlsoOutput) *g.add_output() = testing::MakeValueInfo("y", DType::kFloat, {Dim{rows}, Dim{N}});
  return testing::MakeModel(g, opset);
}

int Fuse(onnx::ModelProto* model) {
  std::unordered_map<std::string, Tensor> constants;
  for (const auto& init : model->graph().initializer()) {
    auto t = TensorFromProto(init);
    if (t) constants.emplace(init.name(), std::move(*t));
  }
  ConstantLookup lookup = [&](const std::string& name) -> const Tensor* {
    auto it = constants.find(name);
    return it == constants.end() ? nullptr : &it->second;
  };
  return FuseMatMulAddBias(model->mutable_graph(), lookup, static_cast<int>(model->opset_import(0).version()));
}

TEST(MatMulBiasFusionTest, FusesAConstantBiasRowInEitherOrder) {
  for (Variant v : {Variant::kYFirst, Variant::kBiasFirst}) {
    onnx::ModelProto model = BiasModel(v, 5);
    ASSERT_EQ(Fuse(&model), 1);
    ASSERT_EQ(model.graph().node_size(), 1);
    const onnx::NodeProto& n = model.graph().node(0);
    EXPECT_EQ(n.op_type(), kMatMulAddBiasOp);
    EXPECT_EQ(n.domain(), kFusedDomain);
    ASSERT_EQ(n.input_size(), 3);
    EXPECT_EQ(n.input(0), "x");
    EXPECT_EQ(n.input(1), "w");
    EXPECT_EQ(n.input(2), "b");
    EXPECT_EQ(n.output(0), "z");
  }
}

TEST(MatMulBiasFusionTest, RefusesWhatTheKernelCannotAddAsARow) {
  for (Variant v : {Variant::kYAlsoOutput, Variant::kBias1xN, Variant::kBiasComputed}) {
    onnx::ModelProto model = BiasModel(v, 5);
    EXPECT_EQ(Fuse(&model), 0) << static_cast<int>(v);
    EXPECT_EQ(model.graph().node_size(), 2) << static_cast<int>(v);
  }
  onnx::ModelProto legacy = BiasModel(Variant::kYFirst, 5, /*opset=*/6);
  EXPECT_EQ(Fuse(&legacy), 0);  // Add-6 and earlier: legacy broadcast attributes
}

// One row (the packed GEMV), 9 and 100 rows (the packed GEMM's 8-row tiles and remainders, or
// Eigen where the tier has no packed GEMM).
TEST(MatMulBiasFusionTest, FusedEqualsUnfusedBitForBitOnEveryTier) {
  for (int64_t rows : {1, 9, 100}) {
    const onnx::ModelProto model = BiasModel(Variant::kBiasFirst, rows);
    SessionOptions ref_opts;
    ref_opts.settings = "nuphar_execution_mode:reference";
    auto reference = Session::CreateFromModel(model, ref_opts);
    ASSERT_TRUE(reference.ok()) << reference.message();
    const Tensor x = RandomTensor({rows, 7}, 5);
    auto want = (*reference)->Run({{"x", x}});
    ASSERT_TRUE(want.ok()) << want.message();
    for (int t = 0; t < kIsaTierCount; ++t) {
      const IsaTier tier = static_cast<IsaTier>(t);
      if (!HostCpu().Supports(tier)) continue;
      SessionOptions opts;
      opts.settings = std::string("nuphar_codegen_target:") + IsaTierName(tier);
      auto fused = Session::CreateFromModel(model, opts);
      ASSERT_TRUE(fused.ok()) << fused.message();
      auto got = (*fused)->Run({{"x", x}});
      ASSERT_TRUE(got.ok()) << got.message();
      ASSERT_EQ(got->size(), 1u);
      ASSERT_EQ((*got)[0].shape(), (*want)[0].shape());
      EXPECT_EQ(std::memcmp((*got)[0].raw(), (*want)[0].raw(), (*got)[0].bytes()), 0)
          << rows << " rows differ on " << IsaTierName(tier);
    }
  }
}

}  // namespace
}  // namespace nuphar
