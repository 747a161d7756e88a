// Guards around libonnx 1.12's shape inference: a schema registry whose inference functions
// check what libonnx's own functions trust, so a hostile attribute comes back as an inference
// error (which every caller treats as "no information") instead of an out-of-bounds access.
//
// # What is guarded (found by tests/fuzz or by reading libonnx 1.12's inference functions; the
// reason for each check is next to it in the .cc)
// - Every op: a constant input's data reaches libonnx only when its payload is what its dims say;
//   otherwise the input is a value without data (ParseData overflows the heap on a raw_data length
//   that is not whole elements; TopK, Range and the window ops read element 0 of empty data).
// - The node is refused (an inference error: "no information" to every caller) for:
//   - LayerNormalization-17: axis outside [-rank, rank];
//   - Conv, ConvInteger, ConvTranspose, QLinearConv: weight and input ranks differ;
//   - Conv, ConvInteger, QLinearConv, MaxPool, AveragePool, LpPool: a stride below 1, or, with an
//     auto_pad other than VALID and no pads, a spatial dim of more than 2^27 strides;
//   - ConstantOfShape, Expand, Reshape: a shape input declared with more than 64 elements;
//   - Reshape: input dims or target values (zeros copied) whose magnitudes multiply past 2^62;
//   - DepthToSpace, SpaceToDepth: blocksize outside 1..2^31-1;
//   - SplitToSequence: a scalar split below 1;
//   - Einsum without "->": a label other than a-z;
//   - GatherND: batch_dims outside 0..64, a negative last indices dim;
//   - Gemm (A, B), RNN, GRU, LSTM, STFT (input 0): rank below 2;
//   - MaxUnpool: I without a shape of rank >= 2; MaxRoiPool: pooled_shape without 2 entries;
//   - Scan, Loop, If: a missing graph attribute; Scan: num_scan_inputs outside 1..inputs.
// tests/graph/onnx_infer_guard_test.cc has a model for each check added from 2026-11-26 on; the
// older ones have their fuzz regression inputs (tests/fuzz/regressions/) and shape_infer tests.
#pragma once

namespace onnx {
class ISchemaRegistry;
}

namespace nuphar {

/// The registry to give onnx::shape_inference::InferShapes instead of OpSchemaRegistry::Instance():
/// the same schemas, those above with checking inference functions. Thread-safe; lives forever.
const onnx::ISchemaRegistry* GuardedSchemaRegistry();

}  // namespace nuphar
