// BroadcastShape and BroadcastPlan against a naive per-element index computation.
#include "runtime/kernels/elementwise/broadcast.h"

#include <gtest/gtest.h>

#include <vector>

namespace nuphar {
namespace {

using Shape = std::vector<int64_t>;

// The flat offset of output element `flat` in an input of shape `in` broadcast to `out`.
int64_t NaiveOffset(const Shape& in, const Shape& out, int64_t flat) {
  int64_t offset = 0, stride = 1;
  for (int i = static_cast<int>(out.size()) - 1; i >= 0; --i) {
    const int64_t coord = flat % out[i];
    flat /= out[i];
    const int j = i - static_cast<int>(out.size() - in.size());
    if (j < 0) continue;
    if (in[j] != 1) offset += coord * stride;
    stride *= in[j];
  }
  return offset;
}

void ExpectPlanMatchesNaive(const Shape& a, const Shape& b) {
  Shape out;
  ASSERT_TRUE(BroadcastShape(a, b, out).ok());
  BroadcastPlan<2> plan;
  ASSERT_TRUE(plan.Init({a, b}, out).ok());
  int64_t total = 1;
  for (auto d : out) total *= d;
  ASSERT_EQ(plan.size, total);
  std::vector<int> visited(static_cast<size_t>(total), 0);
  int64_t expected_out = 0;
  ForEachBroadcastRow(plan, [&](int64_t o, const int64_t* in, int64_t n) {
    EXPECT_EQ(o, expected_out);  // rows come in output order
    for (int64_t i = 0; i < n; ++i) {
      ++visited[static_cast<size_t>(o + i)];
      EXPECT_EQ(in[0] + i * plan.inner_stride(0), NaiveOffset(a, out, o + i));
      EXPECT_EQ(in[1] + i * plan.inner_stride(1), NaiveOffset(b, out, o + i));
    }
    expected_out = o + n;
  });
  for (int v : visited) EXPECT_EQ(v, 1);
}

TEST(BroadcastTest, ShapeRules) {
  Shape out;
  ASSERT_TRUE(BroadcastShape(Shape{2, 1, 4}, Shape{3, 1}, out).ok());
  EXPECT_EQ(out, (Shape{2, 3, 4}));
  ASSERT_TRUE(BroadcastShape(Shape{}, Shape{5}, out).ok());
  EXPECT_EQ(out, (Shape{5}));
  ASSERT_TRUE(BroadcastShape(Shape{0, 3}, Shape{1, 3}, out).ok());
  EXPECT_EQ(out, (Shape{0, 3}));
  Status bad = BroadcastShape(Shape{2, 3}, Shape{4}, out);
  ASSERT_FALSE(bad.ok());
  EXPECT_NE(bad.message().find("[2,3]"), std::string::npos) << bad.message();
}

TEST(BroadcastTest, PlansMatchNaiveIndexing) {
  const std::vector<std::pair<Shape, Shape>> cases = {
      {{2, 3, 4}, {2, 3, 4}}, {{2, 3, 4}, {}},     {{2, 3, 4}, {4}},       {{2, 3, 4}, {3, 1}},
      {{2, 1, 4}, {1, 3, 1}}, {{1}, {5, 1, 1}},    {{3, 1, 2, 1, 2}, {2, 1, 2, 1}}, {{}, {}},
      {{4, 1}, {1, 4}},       {{0, 3}, {3}},       {{2, 3, 1}, {2, 3, 5}},  {{1, 1, 7}, {7}},
  };
  for (const auto& [a, b] : cases) {
    SCOPED_TRACE(::testing::Message() << "a rank " << a.size() << " b rank " << b.size());
    ExpectPlanMatchesNaive(a, b);
    ExpectPlanMatchesNaive(b, a);
  }
}

TEST(BroadcastTest, CollapsesCommonCasesToLongRows) {
  BroadcastPlan<2> same;
  ASSERT_TRUE(same.Init({Shape{8, 16, 32}, Shape{8, 16, 32}}, Shape{8, 16, 32}).ok());
  EXPECT_EQ(same.rank, 1);
  EXPECT_EQ(same.inner(), 8 * 16 * 32);

  BroadcastPlan<2> scalar;
  ASSERT_TRUE(scalar.Init({Shape{8, 16}, Shape{}}, Shape{8, 16}).ok());
  EXPECT_EQ(scalar.rank, 1);
  EXPECT_TRUE(scalar.is_scalar(1));
  EXPECT_EQ(scalar.inner_stride(1), 0);

  BroadcastPlan<2> row;
  ASSERT_TRUE(row.Init({Shape{4, 1, 128}, Shape{128}}, Shape{4, 1, 128}).ok());
  EXPECT_EQ(row.rank, 2);
  EXPECT_EQ(row.inner(), 128);
  EXPECT_EQ(row.inner_stride(0), 1);
  EXPECT_EQ(row.inner_stride(1), 1);
}

TEST(BroadcastTest, RejectsInputThatDoesNotFitTheOutput) {
  BroadcastPlan<1> plan;
  EXPECT_FALSE(plan.Init({Shape{3}}, Shape{2, 4}).ok());
  EXPECT_FALSE(plan.Init({Shape{2, 1}}, Shape{2}).ok());
  EXPECT_FALSE(plan.Init({Shape{3, 4}}, Shape{1, 4}).ok());
}

}  // namespace
}  // namespace nuphar
