// Guards around libonnx 1.12's shape inference: a schema registry whose inference functions
// check what libonnx's own functions trust, so a hostile attribute comes back as an inference
// error (which every caller treats as "no information") instead of an out-of-bounds access.
//
// # What is guarded
// LayerNormalization-17: libonnx normalizes `axis` against the input rank without a range
// check and then writes dims from it, so axis < -rank (or an axis whose int truncation is
// negative) reads and writes before the shape's first dim (found by tests/fuzz: a structurally
// valid model with axis = -100 crashed Session::Create and symbolic_shape_infer).
// Conv, ConvInteger, ConvTranspose, QLinearConv: the kernel shape is read from the weight's dims
// and walked along the input's, so the two ranks must be equal (found by tests/fuzz: ConvInteger
// with a rank-5 weight on a rank-4 input crashed Session::Create).
#pragma once

namespace onnx {
class ISchemaRegistry;
}

namespace nuphar {

/// The registry to give onnx::shape_inference::InferShapes instead of OpSchemaRegistry::Instance():
/// the same schemas, those above with checking inference functions. Thread-safe; lives forever.
const onnx::ISchemaRegistry* GuardedSchemaRegistry();

}  // namespace nuphar
