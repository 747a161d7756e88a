// The opset 18-21 schema table (see opset_schema.h for why it exists).
#include "graph/opset_schema.h"

#include <onnx/defs/schema.h>
#include <onnx/onnx_pb.h>

#include <algorithm>

namespace nuphar {
namespace {

constexpr int V = kVariadic;

// ONNX operator changelog, opsets 18 to 21 (ONNX 1.13 to 1.16). Sorted by op, then version.
constexpr OpSignature kTable[] = {
    {"AffineGrid", 20, 2, 2, 1, 1, false},
    {"AveragePool", 19, 1, 1, 1, 1, false},  // dilations
    {"BitwiseAnd", 18, 2, 2, 1, 1, false},
    {"BitwiseNot", 18, 1, 1, 1, 1, false},
    {"BitwiseOr", 18, 2, 2, 1, 1, false},
    {"BitwiseXor", 18, 2, 2, 1, 1, false},
    {"Cast", 19, 1, 1, 1, 1, true},  // float8 types, saturate
    {"Cast", 21, 1, 1, 1, 1, true},  // int4/uint4
    {"CastLike", 19, 2, 2, 1, 1, true},
    {"CastLike", 21, 2, 2, 1, 1, true},
    {"CenterCropPad", 18, 2, 2, 1, 1, false},
    {"Col2Im", 18, 3, 3, 1, 1, false},
    {"Constant", 19, 0, 0, 1, 1, true},
    {"Constant", 21, 0, 0, 1, 1, true},
    {"ConstantOfShape", 20, 1, 1, 1, 1, true},
    {"ConstantOfShape", 21, 1, 1, 1, 1, true},
    {"DFT", 20, 1, 3, 1, 1, false},  // axis and dft_length as inputs
    {"DeformConv", 19, 3, 5, 1, 1, false},
    {"DequantizeLinear", 19, 2, 3, 1, 1, true},
    {"DequantizeLinear", 21, 2, 3, 1, 1, false},  // block_size
    {"Equal", 19, 2, 2, 1, 1, true},  // string
    {"Flatten", 21, 1, 1, 1, 1, true},
    {"Gelu", 20, 1, 1, 1, 1, false},
    {"GridSample", 20, 2, 2, 1, 1, true},  // N-D: libonnx's 4-D inference stays right
    {"GroupNormalization", 18, 3, 3, 1, 1, false},
    {"GroupNormalization", 21, 3, 3, 1, 1, false},  // scale and bias per channel, stash_type
    {"Identity", 19, 1, 1, 1, 1, true},
    {"Identity", 21, 1, 1, 1, 1, true},
    {"If", 19, 1, 1, 1, V, true},
    {"If", 21, 1, 1, 1, V, true},
    {"ImageDecoder", 20, 1, 1, 1, 1, false},
    {"IsInf", 20, 1, 1, 1, 1, true},
    {"IsNaN", 20, 1, 1, 1, 1, true},
    {"Loop", 19, 2, V, 1, V, true},
    {"Loop", 21, 2, V, 1, V, true},
    {"LpPool", 18, 1, 1, 1, 1, false},  // ceil_mode, dilations
    {"Mish", 18, 1, 1, 1, 1, false},
    {"OptionalGetElement", 18, 1, 1, 1, 1, true},
    {"OptionalHasElement", 18, 0, 1, 1, 1, true},
    {"Pad", 18, 2, 4, 1, 1, false},  // axes
    {"Pad", 19, 2, 4, 1, 1, true},   // wrap mode
    {"Pad", 21, 2, 4, 1, 1, true},
    {"QLinearMatMul", 21, 8, 8, 1, 1, true},
    {"QuantizeLinear", 19, 2, 3, 1, 1, true},
    {"QuantizeLinear", 21, 2, 3, 1, 1, false},  // block_size, output_dtype
    {"ReduceL1", 18, 1, 2, 1, 1, false},  // axes as input 1
    {"ReduceL2", 18, 1, 2, 1, 1, false},
    {"ReduceLogSum", 18, 1, 2, 1, 1, false},
    {"ReduceLogSumExp", 18, 1, 2, 1, 1, false},
    {"ReduceMax", 18, 1, 2, 1, 1, false},
    {"ReduceMax", 20, 1, 2, 1, 1, true},  // bool
    {"ReduceMean", 18, 1, 2, 1, 1, false},
    {"ReduceMin", 18, 1, 2, 1, 1, false},
    {"ReduceMin", 20, 1, 2, 1, 1, true},
    {"ReduceProd", 18, 1, 2, 1, 1, false},
    {"ReduceSumSquare", 18, 1, 2, 1, 1, false},
    {"RegexFullMatch", 20, 1, 1, 1, 1, false},
    {"Reshape", 19, 2, 2, 1, 1, true},
    {"Reshape", 21, 2, 2, 1, 1, true},
    {"Resize", 18, 1, 4, 1, 1, false},  // antialias, axes, keep_aspect_ratio_policy
    {"Resize", 19, 1, 4, 1, 1, false},  // half_pixel_symmetric
    {"Scan", 19, 1, V, 1, V, true},
    {"Scan", 21, 1, V, 1, V, true},
    {"ScatterElements", 18, 3, 3, 1, 1, true},  // reduction max/min: same shapes
    {"ScatterND", 18, 3, 3, 1, 1, true},
    {"Shape", 19, 1, 1, 1, 1, true},
    {"Shape", 21, 1, 1, 1, 1, true},
    {"Size", 19, 1, 1, 1, 1, true},
    {"Size", 21, 1, 1, 1, 1, true},
    {"Split", 18, 1, 2, 1, V, false},  // num_outputs
    {"Squeeze", 21, 1, 2, 1, 1, true},
    {"StringConcat", 20, 2, 2, 1, 1, false},
    {"StringSplit", 20, 1, 1, 2, 2, false},
    {"Transpose", 21, 1, 1, 1, 1, true},
    {"Unsqueeze", 21, 2, 2, 1, 1, true},
};

}  // namespace

const OpSignature* FindNewerSignature(const std::string& op_type, int opset) {
  const OpSignature* found = nullptr;
  for (const OpSignature& row : kTable)
    if (op_type == row.op_type && row.since_version <= opset) found = &row;  // rows ascend by version
  return found;
}

int OpSinceVersion(const std::string& op_type, int opset) {
  if (const OpSignature* row = FindNewerSignature(op_type, opset)) return row->since_version;
  const onnx::OpSchema* schema = onnx::OpSchemaRegistry::Schema(op_type, std::min(opset, kLibOnnxMaxOpset), "");
  return schema ? schema->since_version() : 0;
}

bool LibOnnxInfersOp(const std::string& op_type, int opset) {
  // Every row from the first version above 17 up to `opset` must be a types-only change: a
  // Reduce-20 row (types only) still sits on top of the Reduce-18 signature change.
  for (const OpSignature& row : kTable)
    if (op_type == row.op_type && row.since_version <= opset && !row.types_only) return false;
  return true;
}

Status CheckOpsetKnown(const onnx::ModelProto& model, const std::string& origin) {
  for (const auto& op : model.opset_import()) {
    if (!op.domain().empty() && op.domain() != "ai.onnx") continue;
    if (op.version() > kMaxKnownOpset)
      return Diag::File(origin, "the model imports ONNX opset " + std::to_string(op.version()) +
                                    "; nuphar-cpp knows opsets up to " + std::to_string(kMaxKnownOpset) +
                                    " (re-export the model with opset <= " + std::to_string(kMaxKnownOpset) + ")");
  }
  return Status::OK();
}

}  // namespace nuphar
