// graph/split_sizes.h: a Split's sizes in the form its opset reads, as the runtime's Split kernel
// reads them (the LSTM cell fusion and the JIT's view Splits rely on agreeing with it).
#include "graph/split_sizes.h"

#include <gtest/gtest.h>
#include <onnx/onnx_pb.h>

#include "tests/modellib/model_builder.h"

namespace nuphar {
namespace {

using V = std::vector<int64_t>;

// Split of "x" into `parts` outputs, with input 1 "sizes" when `sizes_input`.
onnx::NodeProto MakeSplit(int parts, bool sizes_input) {
  onnx::GraphProto g;
  std::vector<std::string> outs;
  for (int i = 0; i < parts; ++i) outs.push_back("y" + std::to_string(i));
  onnx::NodeProto& n = testing::AddNode(g, "Split", sizes_input ? std::vector<std::string>{"x", "sizes"}
                                                                : std::vector<std::string>{"x"},
                                        outs);
  testing::SetAttr(n, "axis", int64_t{-1});
  return n;
}

TEST(SplitSizes, EachOpsetReadsItsOwnForm) {
  const V input_sizes = {2, 2, 4};
  onnx::NodeProto both = MakeSplit(3, /*sizes_input=*/true);
  testing::SetAttr(both, "split", V{4, 2, 2});
  EXPECT_EQ(LastAxisSplitSizes(both, 11, 2, 8, &input_sizes), (V{4, 2, 2})) << "opsets 2-12: the attribute";
  EXPECT_EQ(LastAxisSplitSizes(both, 13, 2, 8, &input_sizes), (V{2, 2, 4})) << "opset 13 on: input 1";
  EXPECT_EQ(LastAxisSplitSizes(both, 13, 2, 8, nullptr), V{}) << "input 1 not a known constant";
  const onnx::NodeProto input_only = MakeSplit(3, /*sizes_input=*/true);
  EXPECT_EQ(LastAxisSplitSizes(input_only, 11, 2, 9, &input_sizes), (V{3, 3, 3})) << "opset 11 ignores input 1";
  EXPECT_EQ(LastAxisSplitSizes(input_only, 1, 2, 8, &input_sizes), (V{2, 2, 4})) << "Split-1 without the attribute";
  EXPECT_TRUE(SplitSizesFromInput(13, true));
  EXPECT_FALSE(SplitSizesFromInput(12, false));
  EXPECT_FALSE(SplitSizesFromInput(1, true));
}

TEST(SplitSizes, MalformedSplitsHaveNoSizes) {
  onnx::NodeProto equal = MakeSplit(4, false);
  EXPECT_EQ(LastAxisSplitSizes(equal, 13, 2, 8, nullptr), (V{2, 2, 2, 2}));
  EXPECT_EQ(LastAxisSplitSizes(equal, 13, 2, 7, nullptr), V{}) << "7 columns in 4 equal parts";
  EXPECT_EQ(LastAxisSplitSizes(equal, 13, 0, 8, nullptr), V{}) << "rank 0";
  onnx::NodeProto axis0 = equal;
  axis0.mutable_attribute(0)->set_i(0);  // MakeSplit's only attribute: axis
  EXPECT_EQ(LastAxisSplitSizes(axis0, 13, 2, 8, nullptr), V{}) << "not the last axis";
  onnx::NodeProto counted = equal;
  testing::SetAttr(counted, "num_outputs", int64_t{4});
  EXPECT_EQ(LastAxisSplitSizes(counted, 18, 2, 8, nullptr), (V{2, 2, 2, 2}));
  EXPECT_EQ(LastAxisSplitSizes(counted, 17, 2, 8, nullptr), V{}) << "num_outputs before Split-18";
  onnx::NodeProto miscounted = MakeSplit(4, false);
  testing::SetAttr(miscounted, "num_outputs", int64_t{3});
  EXPECT_EQ(LastAxisSplitSizes(miscounted, 18, 2, 8, nullptr), V{}) << "num_outputs unequal to the outputs";
  onnx::NodeProto short_sum = MakeSplit(2, false);
  testing::SetAttr(short_sum, "split", V{2, 3});
  EXPECT_EQ(LastAxisSplitSizes(short_sum, 11, 2, 8, nullptr), V{}) << "sizes that do not add up";
}

}  // namespace
}  // namespace nuphar
