// Fuses the int8 LSTM cell of a quantized Scan body (model_editor --mode to_scan, then
// model_quantizer) into one node: the fused dynamic-quantized MatMul of the recurrence, the gate
// Split and the gate math. Its kernel (runtime/kernels/quant/fused_dq_lstm_cell.cc) runs the step
// as one loop that issues the gate math of one chunk of hidden units inside the int8 product of
// the next, with the same floats as the nodes it replaces.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "runtime/core/graph_rewrite.h"

namespace onnx {
class GraphProto;
}

namespace nuphar {

/// Op of the fused node (domain kFusedDomain; never written to a model file):
///   h, c = DynQuantLstmCell(X, Wq, step, base, rowsum, add, c_prev)
/// inputs 0-5 and the attributes are those of the DynQuantMatMul node it absorbs (add may be ""),
/// plus attribute `gates` = the Split parts of the input, output, forget and cell gates, and `rank`
/// = h_prev's declared rank (the Split was of its last axis; the kernel requires that rank).
inline constexpr const char* kDynQuantLstmCellOp = "DynQuantLstmCell";

/// Rewrites every match in `graph` (this level only; bodies are rewritten when compiled). A
/// DynQuantMatMul whose result is split in four but is not an LSTM cell the kernel computes gets
/// one line in `refusals` ("<node>: <reason>"). `onnx_opset`: the graph's ONNX opset (which form of
/// Split's sizes counts). Returns the number of cells fused.
int FuseDynQuantLstmCell(onnx::GraphProto* graph, const ConstantLookup& lookup, int onnx_opset,
                         std::vector<std::string>* refusals);

/// The pass as a session rewrite, after CreateDynQuantMatMulFusion; it counts its cells into
/// ModelContext::fused_patterns and the counter "fused_lstm_cells", and prints its refusals with nuphar_dump_partition.
std::unique_ptr<GraphPass> CreateDynQuantLstmCellFusion();

}  // namespace nuphar
