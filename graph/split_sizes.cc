#include "graph/split_sizes.h"

#include <onnx/onnx_pb.h>

#include "graph/node_builder.h"

namespace nuphar {

bool SplitSizesFromInput(int opset, bool has_split_attribute) {
  return opset >= 13 || (opset == 1 && !has_split_attribute);
}

std::vector<int64_t> LastAxisSplitSizes(const onnx::NodeProto& split, int opset, int64_t rank, int64_t width,
                                        const std::vector<int64_t>* constant_sizes) {
  const int64_t axis = AttrInt(split, "axis", 0);
  if (rank < 1 || width < 0 || (axis != -1 && axis != rank - 1)) return {};
  const int64_t parts = split.output_size();
  const bool has_input = split.input_size() > 1 && !split.input(1).empty();
  if (FindAttr(split, "num_outputs") && (opset < 18 || has_input || AttrInt(split, "num_outputs", 0) != parts)) return {};
  std::vector<int64_t> sizes;
  if (!SplitSizesFromInput(opset, FindAttr(split, "split") != nullptr)) {
    sizes = AttrInts(split, "split").value_or(std::vector<int64_t>{});
  } else if (has_input) {
    if (!constant_sizes) return {};
    sizes = *constant_sizes;
  }
  if (sizes.empty()) {
    if (parts < 1 || width % parts != 0) return {};
    sizes.assign(static_cast<size_t>(parts), width / parts);
  }
  int64_t total = 0;
  for (int64_t v : sizes) {
    if (v < 0 || v > width) return {};  // also keeps the sum from overflowing
    total += v;
  }
  if (static_cast<int64_t>(sizes.size()) != parts || total != width) return {};
  return sizes;
}

}  // namespace nuphar
