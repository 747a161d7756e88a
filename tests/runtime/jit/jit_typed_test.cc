// Generated elementwise kernels beyond float against the reference executor, on every codegen
// tier: int32/int64 arithmetic (division and modulo by 0 and -1, wrapping at the limits),
// comparisons and logic with bool results, Where, Cast between float, integers and bool (NaN,
// infinities, values beyond int64), shape arithmetic merged into one group, symbolic dims, the
// fallback when the actual shapes do not fit, and compare mode's exact check of integer outputs.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <limits>

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
using testing::NoteText;
using testing::Open;
using testing::Random;

// Integers with every edge the reference handles on its own: 0, +-1, the limits (whose negation
// and division by -1 wrap), and ordinary values of both signs. Without `limits` for Add, Sub and
// Mul: the reference's C++ overflows there (undefined behaviour, which UBSan reports).
template <class T>
Tensor EdgeIntegers(int64_t rows, int64_t cols, uint32_t seed, bool limits = true) {
  const T hi = limits ? std::numeric_limits<T>::max() : T{1000}, lo = limits ? std::numeric_limits<T>::min() : T{-1000};
  const std::vector<T> edges = {0, 1, -1, 7, -7, 3, -2, hi, lo, 100, -100};
  std::vector<T> v(static_cast<size_t>(rows * cols));
  for (size_t i = 0; i < v.size(); ++i) v[i] = edges[(i * 7 + seed) % edges.size()];
  return Tensor::FromVector<T>({rows, cols}, v);
}

// y = op(x, w) (or op(x)) for every integer op, x [N, 11] (N symbolic), w a row [11] or [N, 11].
template <class T>
void ExpectIntegerOpsIdentical() {
  const DType type = DTypeOf<T>::value;
  const std::vector<std::string> binary = {"Add", "Sub", "Mul", "Div", "Max", "Min", "Mod", "ModTrunc"};
  const std::vector<std::string> unary = {"Neg", "Abs"};
  for (const char* tier : kCodegenTiers) {
    for (const auto& name : binary) {
      for (bool row : {false, true}) {
        SCOPED_TRACE(std::string(tier) + " " + name + (row ? " row" : " full"));
        onnx::GraphProto g;
        g.set_name("g");
        const std::vector<Dim> full = {std::string("N"), int64_t{11}};
        *g.add_input() = MakeValueInfo("x", type, full);
        *g.add_input() = MakeValueInfo("w", type, row ? std::vector<Dim>{int64_t{11}} : full);
        *g.add_output() = MakeValueInfo("y", type, full);
        auto& node = AddNode(g, name == "ModTrunc" ? "Mod" : name, {"x", "w"}, {"y"});
        if (name == "ModTrunc") SetAttr(node, "fmod", int64_t{1});
        const bool limits = name != "Add" && name != "Sub" && name != "Mul";
        for (int64_t n : {1, 3}) {
          Tensor w = row ? EdgeIntegers<T>(1, 11, 5, limits) : EdgeIntegers<T>(n, 11, 5, limits);
          if (row) w = Tensor::FromVector<T>({11}, std::vector<T>(w.data<T>(), w.data<T>() + 11));
          ExpectBitIdentical(MakeModel(g, 13), {{"x", EdgeIntegers<T>(n, 11, 0, limits)}, {"w", w}}, 1, TierSettings(tier));
        }
      }
    }
    for (const auto& name : unary) {
      SCOPED_TRACE(std::string(tier) + " " + name);
      onnx::GraphProto g;
      g.set_name("g");
      *g.add_input() = MakeValueInfo("x", type, {std::string("N"), int64_t{11}});
      *g.add_output() = MakeValueInfo("y", type, {std::string("N"), int64_t{11}});
      AddNode(g, name, {"x"}, {"y"});
      ExpectBitIdentical(MakeModel(g, 13), {{"x", EdgeIntegers<T>(4, 11, 3)}}, 1, TierSettings(tier));
    }
  }
}

TEST(JitTyped, Int64ArithmeticIsIdentical) { ExpectIntegerOpsIdentical<int64_t>(); }
TEST(JitTyped, Int32ArithmeticIsIdentical) { ExpectIntegerOpsIdentical<int32_t>(); }

// Comparisons of float (NaN included) and int64 values, the logic ops on their results, and Where
// selecting float and int64 values by them: one partition of eleven nodes, bool values inside.
TEST(JitTyped, ComparisonsLogicAndWhereAreIdentical) {
  onnx::GraphProto g;
  g.set_name("g");
  const std::vector<Dim> shape = {std::string("N"), int64_t{9}};
  for (const char* n : {"x", "w"}) *g.add_input() = MakeValueInfo(n, DType::kFloat, shape);
  for (const char* n : {"i", "j"}) *g.add_input() = MakeValueInfo(n, DType::kInt64, shape);
  *g.add_output() = MakeValueInfo("f", DType::kFloat, shape);
  *g.add_output() = MakeValueInfo("k", DType::kInt64, shape);
  *g.add_output() = MakeValueInfo("m", DType::kBool, shape);
  for (const char* n : {"eq", "lt", "gt", "le", "ge", "ne", "a", "o", "x2"})
    *g.add_value_info() = MakeValueInfo(n, DType::kBool, shape);
  AddNode(g, "Equal", {"x", "w"}, {"eq"});
  AddNode(g, "Less", {"x", "w"}, {"lt"});
  AddNode(g, "Greater", {"i", "j"}, {"gt"});
  AddNode(g, "LessOrEqual", {"i", "j"}, {"le"});
  AddNode(g, "GreaterOrEqual", {"x", "w"}, {"ge"});
  AddNode(g, "Not", {"eq"}, {"ne"});
  AddNode(g, "And", {"ne", "gt"}, {"a"});
  AddNode(g, "Or", {"lt", "le"}, {"o"});
  AddNode(g, "Xor", {"a", "ge"}, {"x2"});
  AddNode(g, "Where", {"o", "x", "w"}, {"f"});
  AddNode(g, "Where", {"x2", "i", "j"}, {"k"});
  AddNode(g, "Equal", {"x2", "o"}, {"m"});
  const onnx::ModelProto model = MakeModel(g, 13);
  for (const char* tier : kCodegenTiers) {
    for (int64_t n : {1, 5}) {
      SCOPED_TRACE(std::string(tier) + " N=" + std::to_string(n));
      Tensor x = Random({n, 9}, 1, -2.f, 2.f), w = Random({n, 9}, 2, -2.f, 2.f);
      x.data<float>()[0] = std::nanf("");
      w.data<float>()[1] = std::nanf("");
      w.data<float>()[2] = x.data<float>()[2];  // equal values
      ExpectBitIdentical(model, {{"x", x}, {"w", w}, {"i", EdgeIntegers<int64_t>(n, 9, 0)}, {"j", EdgeIntegers<int64_t>(n, 9, 4)}},
                         12, TierSettings(tier));
    }
  }
}

// Cast float -> int32 / int64 / bool as the reference's ConvertValue (truncation toward zero; NaN,
// infinities and values beyond int64 give 0; int32 wraps), and back: int -> float, bool -> float.
TEST(JitTyped, CastFollowsTheReference) {
  const float inf = std::numeric_limits<float>::infinity();
  const std::vector<float> values = {0.f, -0.f, 2.9f, -2.9f, 0.5f, -0.5f, std::nanf(""), inf, -inf, 1e30f, -1e30f,
                                     9.2233715e18f, -9.223372e18f, 3e9f, -3e9f, 2147483520.f, 16777217.f, -1e-40f};
  for (const char* tier : kCodegenTiers) {
    for (DType to : {DType::kInt64, DType::kInt32, DType::kBool}) {
      SCOPED_TRACE(std::string(tier) + " float -> " + DTypeName(to));
      onnx::GraphProto g;
      g.set_name("g");
      const int64_t n = static_cast<int64_t>(values.size());
      *g.add_input() = MakeValueInfo("x", DType::kFloat, {std::string("N")});
      *g.add_output() = MakeValueInfo("y", to, {std::string("N")});
      *g.add_output() = MakeValueInfo("z", DType::kFloat, {std::string("N")});
      *g.add_value_info() = MakeValueInfo("a", DType::kFloat, {std::string("N")});
      AddNode(g, "Neg", {"x"}, {"a"});
      SetAttr(AddNode(g, "Cast", {"a"}, {"y"}), "to", static_cast<int64_t>(to));
      SetAttr(AddNode(g, "Cast", {"y"}, {"z"}), "to", static_cast<int64_t>(DType::kFloat));
      ExpectBitIdentical(MakeModel(g, 13), {{"x", Tensor::FromVector<float>({n}, values)}}, 3, TierSettings(tier));
    }
  }
}

// Silero's shape arithmetic: Shape -> Gather -> Div / Mul / Add / Sub in int64 on a scalar, with a
// Cast to float and back between them. The int64 nodes and the Casts are one partition.
TEST(JitTyped, ShapeArithmeticIsOneGroup) {
  onnx::GraphProto g;
  g.set_name("g");
  *g.add_input() = MakeValueInfo("x", DType::kFloat, {int64_t{1}, std::string("seq")});
  *g.add_output() = MakeValueInfo("y", DType::kInt64, {});
  *g.add_output() = MakeValueInfo("q", DType::kInt64, {});
  for (const auto& [name, v] : std::vector<std::pair<std::string, int64_t>>{{"one", 1}, {"hop", 64}, {"pad", 3}}) {
    auto* t = g.add_initializer();
    t->set_name(name);
    t->set_data_type(onnx::TensorProto::INT64);
    t->add_int64_data(v);
  }
  AddNode(g, "Shape", {"x"}, {"s"});
  AddNode(g, "Gather", {"s", "one"}, {"len"});
  AddNode(g, "Add", {"len", "pad"}, {"a"});
  AddNode(g, "Div", {"a", "hop"}, {"d"});
  SetAttr(AddNode(g, "Cast", {"d"}, {"df"}), "to", static_cast<int64_t>(DType::kFloat));
  AddNode(g, "Sqrt", {"df"}, {"r"});
  SetAttr(AddNode(g, "Cast", {"r"}, {"ri"}), "to", static_cast<int64_t>(DType::kInt64));
  AddNode(g, "Mul", {"ri", "hop"}, {"y"});
  AddNode(g, "Sub", {"len", "d"}, {"q"});
  const onnx::ModelProto model = MakeModel(g, 13);
  for (const char* tier : kCodegenTiers)
    for (int64_t seq : {1, 512, 1536}) {
      SCOPED_TRACE(std::string(tier) + " seq=" + std::to_string(seq));
      ExpectBitIdentical(model, {{"x", Random({1, seq}, 3)}}, 9, TierSettings(tier));  // 2 data movement + 7
    }
  auto jit = Open(model, "");
  ASSERT_TRUE(jit);
  EXPECT_EQ(jit->counter("jit_partitions"), 3);  // Shape, Gather, and the arithmetic
}

// A declared shape that the actual one contradicts (s declared a row [1, 4], computed [N, 4] by
// the reference's Sign): the generated code does not fit, the reference runs the group, with
// integer results all the same.
TEST(JitTyped, WrongDeclaredShapesFallBackToTheReference) {
  onnx::GraphProto g;
  g.set_name("g");
  *g.add_input() = MakeValueInfo("x", DType::kInt64, {std::string("N"), int64_t{4}});
  *g.add_output() = MakeValueInfo("y", DType::kBool, {std::string("N"), int64_t{4}});
  *g.add_value_info() = MakeValueInfo("s", DType::kInt64, {int64_t{1}, int64_t{4}});
  *g.add_value_info() = MakeValueInfo("a", DType::kInt64, {std::string("N"), int64_t{4}});
  AddNode(g, "Sign", {"x"}, {"s"});
  AddNode(g, "Div", {"x", "s"}, {"a"});
  AddNode(g, "Less", {"a", "x"}, {"y"});
  for (const char* tier : kCodegenTiers)
    ExpectBitIdentical(MakeModel(g, 13), {{"x", EdgeIntegers<int64_t>(3, 4, 1)}}, 2, TierSettings(tier));
}

// Compare mode checks integer and bool outputs byte for byte and says so.
TEST(JitTyped, CompareModeChecksIntegersExactly) {
  onnx::GraphProto g;
  g.set_name("g");
  *g.add_input() = MakeValueInfo("x", DType::kInt32, {int64_t{1}, int64_t{16}});
  *g.add_output() = MakeValueInfo("y", DType::kBool, {int64_t{1}, int64_t{16}});
  *g.add_value_info() = MakeValueInfo("a", DType::kInt32, {int64_t{1}, int64_t{16}});
  AddNode(g, "Neg", {"x"}, {"a"});
  AddNode(g, "Equal", {"a", "x"}, {"y"});
  DiagnosticCapture capture;
  {
    auto s = Open(MakeModel(g, 13), "nuphar_execution_mode:compare");
    ASSERT_TRUE(s);
    auto out = s->Run({{"x", EdgeIntegers<int32_t>(1, 16, 0)}});
    ASSERT_TRUE(out.ok()) << out.message();
  }
  const std::string notes = NoteText(capture);
  EXPECT_NE(notes.find("1 run(s), identical"), std::string::npos) << notes;
}

// Types the generator does not take stay with the reference, each with its reason: a Mod of
// floats, an Add of doubles.
TEST(JitTyped, RefusesWhatItDoesNotGenerate) {
  onnx::GraphProto g;
  g.set_name("main");
  *g.add_input() = MakeValueInfo("x", DType::kFloat, {int64_t{4}});
  *g.add_input() = MakeValueInfo("d", DType::kDouble, {int64_t{4}});
  *g.add_output() = MakeValueInfo("y", DType::kFloat, {int64_t{4}});
  *g.add_output() = MakeValueInfo("z", DType::kDouble, {int64_t{4}});
  SetAttr(AddNode(g, "Mod", {"x", "x"}, {"y"}, "mod"), "fmod", int64_t{1});
  AddNode(g, "Add", {"d", "d"}, {"z"}, "add");
  DiagnosticCapture capture;
  auto s = Open(MakeModel(g, 13), "nuphar_dump_partition:on");
  ASSERT_TRUE(s);
  EXPECT_EQ(s->counter("jit_nodes"), 0);
  const std::string notes = NoteText(capture);
  EXPECT_NE(notes.find("'mod' (Mod): Mod is generated for int32 and int64 only"), std::string::npos) << notes;
  EXPECT_NE(notes.find("'add' (Add): an operand of type double"), std::string::npos) << notes;
}

}  // namespace
}  // namespace nuphar
