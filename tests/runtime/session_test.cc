// Session behaviour: load-time refusals, input validation, outer scope, frame reuse.
#include "runtime/session.h"

#include <gtest/gtest.h>

#include <algorithm>

#include "tests/modellib/model_builder.h"

namespace nuphar {
namespace {

using testing::AddNode;
using testing::MakeModel;
using testing::MakeValueInfo;

onnx::ModelProto IdentityModel() {
  onnx::GraphProto g;
  g.set_name("main");
  *g.add_input() = MakeValueInfo("x", DType::kFloat, {std::string("batch"), int64_t{3}});
  *g.add_input() = MakeValueInfo("y", DType::kFloat, {std::string("batch"), int64_t{3}});
  *g.add_output() = MakeValueInfo("x_out", DType::kFloat, {std::string("batch"), int64_t{3}});
  *g.add_output() = MakeValueInfo("y_out", DType::kFloat, {std::string("batch"), int64_t{3}});
  AddNode(g, "Identity", {"x"}, {"x_out"});
  AddNode(g, "Identity", {"y"}, {"y_out"});
  return MakeModel(g, 13);
}

TEST(SessionTest, RunsIdentity) {
  auto s = Session::CreateFromModel(IdentityModel());
  ASSERT_TRUE(s.ok()) << s.message();
  Tensor x = Tensor::FromVector<float>({1, 3}, {1, 2, 3});
  Tensor y = Tensor::FromVector<float>({1, 3}, {4, 5, 6});
  for (int rep = 0; rep < 3; ++rep) {
    auto out = (*s)->Run({{"x", x}, {"y", y}});
    ASSERT_TRUE(out.ok()) << out.message();
    ASSERT_EQ(out->size(), 2u);
    EXPECT_EQ((*out)[1].data<float>()[2], 6.0f);
  }
}

TEST(SessionTest, RefusesUnknownOpAtLoad) {
  auto m = IdentityModel();
  m.mutable_graph()->mutable_node(0)->set_op_type("FancyOp");
  m.mutable_graph()->mutable_node(0)->set_name("bad_node");
  auto s = Session::CreateFromModel(m, {}, "m.onnx");
  ASSERT_FALSE(s.ok());
  EXPECT_NE(s.message().find("bad_node"), std::string::npos) << s.message();
  EXPECT_NE(s.message().find("FancyOp"), std::string::npos) << s.message();
  EXPECT_NE(s.message().find("m.onnx"), std::string::npos) << s.message();
}

TEST(SessionTest, RefusesCycle) {
  onnx::GraphProto g;
  *g.add_input() = MakeValueInfo("x", DType::kFloat, {int64_t{1}});
  *g.add_output() = MakeValueInfo("b", DType::kFloat, {int64_t{1}});
  AddNode(g, "Identity", {"b"}, {"a"}, "first");
  AddNode(g, "Identity", {"a"}, {"b"}, "second");
  auto s = Session::CreateFromModel(MakeModel(g, 13));
  ASSERT_FALSE(s.ok());
  EXPECT_NE(s.message().find("cycle"), std::string::npos) << s.message();
}

TEST(SessionTest, ValidatesInputs) {
  auto s = Session::CreateFromModel(IdentityModel());
  ASSERT_TRUE(s.ok());
  Tensor x = Tensor::FromVector<float>({1, 3}, {1, 2, 3});
  auto missing = (*s)->Run({{"x", x}});
  ASSERT_FALSE(missing.ok());
  EXPECT_NE(missing.message().find("missing input 'y'"), std::string::npos) << missing.message();

  auto wrong_dtype = (*s)->Run({{"x", x}, {"y", Tensor::FromVector<int64_t>({1, 3}, {1, 2, 3})}});
  ASSERT_FALSE(wrong_dtype.ok());
  EXPECT_NE(wrong_dtype.message().find("int64"), std::string::npos) << wrong_dtype.message();

  auto wrong_dim = (*s)->Run({{"x", x}, {"y", Tensor::FromVector<float>({1, 2}, {1, 2})}});
  ASSERT_FALSE(wrong_dim.ok());
  EXPECT_NE(wrong_dim.message().find("dim 1 must be 3"), std::string::npos) << wrong_dim.message();

  auto symbol_clash = (*s)->Run({{"x", x}, {"y", Tensor::FromVector<float>({2, 3}, {1, 2, 3, 4, 5, 6})}});
  ASSERT_FALSE(symbol_clash.ok());
  EXPECT_NE(symbol_clash.message().find("'batch'"), std::string::npos) << symbol_clash.message();
}

}  // namespace
}  // namespace nuphar

namespace nuphar {
namespace {

TEST(SessionTest, RefusesUnknownSetting) {
  SessionOptions options;
  options.settings = "nuphar_no_such_key:1";
  auto s = Session::CreateFromModel(IdentityModel(), options);
  ASSERT_FALSE(s.ok());
  EXPECT_NE(s.message().find("unknown key 'nuphar_no_such_key'"), std::string::npos) << s.message();
  options.settings = "nuphar_execution_mode:REFERENCE, nuphar_cache_path:C:\\x";
  EXPECT_TRUE(Session::CreateFromModel(IdentityModel(), options).ok());
}

// Weights held in Constant nodes (Paddle's exports): the rewrite copy borrows a large Constant's
// value as an initializer; outputs equal the reference execution, also where the Constant's
// output is a graph output itself.
TEST(SessionTest, LargeConstantNodeWeightsEqualReference) {
  onnx::GraphProto g;
  g.set_name("main");
  *g.add_input() = MakeValueInfo("x", DType::kFloat, {int64_t{1}, int64_t{8}, int64_t{6}, int64_t{6}});
  *g.add_output() = MakeValueInfo("y", DType::kFloat, {int64_t{1}, int64_t{16}, int64_t{4}, int64_t{4}});
  *g.add_output() = MakeValueInfo("w", DType::kFloat, {int64_t{16}, int64_t{8}, int64_t{3}, int64_t{3}});
  std::vector<float> w(16 * 8 * 3 * 3), b(16);
  for (size_t i = 0; i < w.size(); ++i) w[i] = static_cast<float>(static_cast<int>(i * 37 % 101) - 50) / 64.f;
  for (size_t i = 0; i < b.size(); ++i) b[i] = static_cast<float>(i) / 8.f - 1.f;
  testing::SetAttr(AddNode(g, "Constant", {}, {"w"}), "value", MakeTensor<float>("w_value", {16, 8, 3, 3}, w));
  testing::SetAttr(AddNode(g, "Constant", {}, {"b"}), "value", MakeTensor<float>("b_value", {16}, b));
  AddNode(g, "Conv", {"x", "w", "b"}, {"c"});
  AddNode(g, "Relu", {"c"}, {"y"});
  const auto model = MakeModel(g, 13);
  std::vector<float> xs(8 * 6 * 6);
  for (size_t i = 0; i < xs.size(); ++i) xs[i] = static_cast<float>(static_cast<int>(i * 13 % 29) - 14) / 16.f;
  const Tensor x = Tensor::FromVector<float>({1, 8, 6, 6}, xs);
  SessionOptions reference;
  reference.settings = "nuphar_execution_mode:reference";
  auto fused = Session::CreateFromModel(model);
  auto plain = Session::CreateFromModel(model, reference);
  ASSERT_TRUE(fused.ok()) << fused.message();
  ASSERT_TRUE(plain.ok()) << plain.message();
  auto got = (*fused)->Run({{"x", x}});
  auto want = (*plain)->Run({{"x", x}});
  ASSERT_TRUE(got.ok()) << got.message();
  ASSERT_TRUE(want.ok()) << want.message();
  ASSERT_EQ(got->size(), 2u);
  ASSERT_EQ((*got)[0].shape(), (*want)[0].shape());
  const float* gy = (*got)[0].data<float>();
  const float* wy = (*want)[0].data<float>();
  float largest = 0;
  for (int64_t i = 0; i < (*want)[0].size(); ++i) {
    EXPECT_NEAR(gy[i], wy[i], 1e-4f) << i;
    largest = std::max(largest, wy[i]);
  }
  EXPECT_GT(largest, 1.f);  // the weights reached the Conv (zeros would pass the comparison)
  ASSERT_EQ((*got)[1].size(), static_cast<int64_t>(w.size()));
  for (size_t i = 0; i < w.size(); ++i) ASSERT_EQ((*got)[1].data<float>()[i], w[i]) << i;
}

}  // namespace
}  // namespace nuphar
