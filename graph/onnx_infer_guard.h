// Guards around libonnx 1.12's shape inference: a schema registry whose inference functions
// check what libonnx's own functions trust, so a hostile attribute comes back as an inference
// error (which every caller treats as "no information") instead of an out-of-bounds access.
//
// # What is guarded (each found by tests/fuzz; the reasons are next to each check in the .cc)
// - LayerNormalization-17: axis outside [-rank, rank] reads and writes before the shape's first dim.
// - Conv, ConvInteger, ConvTranspose, QLinearConv: weight and input ranks must be equal.
// - Conv, ConvInteger, QLinearConv, MaxPool, AveragePool, LpPool: strides >= 1 (libonnx divides by
//   them) and, for auto_pad SAME_*, a spatial dim at most 2^24 strides (libonnx loops over them).
// - ConstantOfShape, Expand, Reshape: a shape input declared with more than 64 elements.
// - Reshape: known input dims and target values whose products pass 2^62 (INT64_MIN / -1 traps).
// - DepthToSpace, SpaceToDepth: blocksize in 1..2^31-1 (a multiple of 2^32 squares to 0).
// - SplitToSequence: a known scalar split below 1 (libonnx takes the dim modulo it).
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
