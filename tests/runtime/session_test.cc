// Session behaviour: load-time refusals, input validation, outer scope, frame reuse.
#include "runtime/session.h"

#include <gtest/gtest.h>

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

}  // namespace
}  // namespace nuphar
