// The sizes a Split node splits into, read as the runtime's Split kernel reads them, for the passes
// that must agree with it (the LSTM cell fusion, the JIT's view Splits).
#pragma once

#include <cstdint>
#include <vector>

#include "graph/onnx_fwd.h"

namespace nuphar {

/// Whether Split at `opset` reads its sizes from input 1 (opset 13 on; Split-1 without the
/// attribute) rather than from its 'split' attribute (opsets 2-12).
bool SplitSizesFromInput(int opset, bool has_split_attribute);

/// Sizes of Split node `split` (ONNX opset `opset`) along the last axis of a value of rank `rank`
/// whose last dim is `width`: the form its opset reads (SplitSizesFromInput; `constant_sizes` is
/// input 1's value when it is a constant), else equal parts. Empty when the node does not split
/// the last axis into sizes known here, or is malformed: Split-18's num_outputs before opset 18,
/// beside input 1 or unequal to the outputs; sizes that do not add up to `width`.
std::vector<int64_t> LastAxisSplitSizes(const onnx::NodeProto& split, int opset, int64_t rank, int64_t width,
                                        const std::vector<int64_t>* constant_sizes);

}  // namespace nuphar
