// Guards around libonnx 1.12's shape inference: a schema registry whose inference functions
// check what libonnx's own functions trust, so a hostile attribute comes back as an inference
// error (which every caller treats as "no information") instead of an out-of-bounds access.
//
// # What is guarded (found by tests/fuzz or by reading libonnx 1.12; each check's reason is next
// to it in the .cc, and tests/graph/onnx_infer_guard_test.cc has a model for each)
// - Every op: each constant input's data must be what its dims say (ParseData overflows the heap
//   on a raw_data length that is not whole elements; TopK, Range and the window ops read element
//   0 of empty data).
// - LayerNormalization-17: axis outside [-rank, rank] reads and writes before the shape's first dim.
// - Conv, ConvInteger, ConvTranspose, QLinearConv: weight and input ranks must be equal.
// - Conv, ConvInteger, QLinearConv, MaxPool, AveragePool, LpPool: strides >= 1 (libonnx divides by
//   them) and, for auto_pad SAME_*, a spatial dim at most 2^24 strides (libonnx loops over them).
// - ConstantOfShape, Expand, Reshape: a shape input declared with more than 64 elements.
// - Reshape: negative declared input dims, and input dims or target values (zeros copied) whose
//   products pass 2^62 (INT64_MIN / -1 traps).
// - DepthToSpace, SpaceToDepth: blocksize in 1..2^31-1 (a multiple of 2^32 squares to 0).
// - SplitToSequence: a scalar split below 1 (libonnx takes the dim modulo it).
// - Einsum without "->": labels other than a-z (a stack array indexed by label - 'a').
// - GatherND: batch_dims in 0..64 and no negative declared indices dim (dims read before the first).
// - Gemm (1-6), RNN/GRU/LSTM (old versions), STFT: inputs whose dims 0 and 1 are read unchecked
//   need rank >= 2; MaxUnpool's I needs a shape of rank >= 2; MaxRoiPool's pooled_shape 2 entries.
// - Scan, Loop, If: missing graph attributes; Scan's num_scan_inputs outside 1..inputs.
#pragma once

namespace onnx {
class ISchemaRegistry;
}

namespace nuphar {

/// The registry to give onnx::shape_inference::InferShapes instead of OpSchemaRegistry::Instance():
/// the same schemas, those above with checking inference functions. Thread-safe; lives forever.
const onnx::ISchemaRegistry* GuardedSchemaRegistry();

}  // namespace nuphar
