// Checking wrappers around libonnx inference functions (graph/onnx_infer_guard.h).
#include "graph/onnx_infer_guard.h"

#include <onnx/defs/schema.h>
#include <onnx/defs/shape_inference.h>
#include <onnx/defs/tensor_proto_util.h>

#include <cstdint>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <utility>
#include <vector>

namespace nuphar {
namespace {

// axis in [-rank, rank] of input 0 when its shape is known (rank is where libonnx's loop ends).
void CheckLayerNormAxis(onnx::InferenceContext& ctx) {
  if (ctx.getNumInputs() < 1 || !onnx::hasInputShape(ctx, 0)) return;
  const int64_t rank = ctx.getInputType(0)->tensor_type().shape().dim_size();
  const onnx::AttributeProto* a = ctx.getAttribute("axis");
  const int64_t axis = a ? a->i() : -1;
  if (axis < -rank || axis > rank)
    fail_shape_inference("axis ", axis, " is out of range for an input of rank ", rank);
}

// Conv-like ops: libonnx's convPoolShapeInference reads the kernel shape from the weight's
// dims and walks the input's spatial dims with it, assuming equal ranks.
void CheckConvRanks(onnx::InferenceContext& ctx, size_t weight_index) {
  if (ctx.getNumInputs() <= weight_index || !onnx::hasInputShape(ctx, 0) || !onnx::hasInputShape(ctx, weight_index))
    return;
  const int x_rank = ctx.getInputType(0)->tensor_type().shape().dim_size();
  const int w_rank = ctx.getInputType(weight_index)->tensor_type().shape().dim_size();
  if (x_rank < 2 || w_rank != x_rank)
    fail_shape_inference("the input has rank ", x_rank, " and the weight rank ", w_rank, "; both must be equal and >= 2");
}

// Ops whose output rank is the length of a 1-D shape input: when that input's values are not
// known, libonnx still adds one unknown dim per declared element (ConstantOfShape declared
// [2^40] grew past 2 GiB in small allocations; fuzz_graph_tools). No tensor has that rank.
constexpr int64_t kMaxShapeInputLength = 64;

void CheckShapeInputLength(onnx::InferenceContext& ctx, size_t shape_index) {
  if (ctx.getNumInputs() <= shape_index || !onnx::hasInputShape(ctx, shape_index)) return;
  const auto& shape = ctx.getInputType(shape_index)->tensor_type().shape();
  for (const auto& dim : shape.dim())
    if (dim.has_dim_value() && (dim.dim_value() < 0 || dim.dim_value() > kMaxShapeInputLength))
      fail_shape_inference("the shape input (input ", shape_index, ") is declared with ", dim.dim_value(),
                           " elements; an output rank must be 0..", kMaxShapeInputLength);
}

// Control flow: libonnx dereferences its graph attributes and Scan's num_scan_inputs without
// checking they exist (fuzz_session_create: a Scan without num_scan_inputs, SEGV in
// ScanInferenceFunction during function expansion).
void CheckGraphAttribute(onnx::InferenceContext& ctx, const char* name) {
  const onnx::AttributeProto* a = ctx.getAttribute(name);
  if (a == nullptr || !a->has_g()) fail_shape_inference("the graph attribute '", name, "' is missing");
}

void CheckScanAttributes(onnx::InferenceContext& ctx) {
  CheckGraphAttribute(ctx, "body");
  const onnx::AttributeProto* n = ctx.getAttribute("num_scan_inputs");
  if (n == nullptr || n->i() < 1 || n->i() > static_cast<int64_t>(ctx.getNumInputs()))
    fail_shape_inference("num_scan_inputs is missing or outside 1..", ctx.getNumInputs());
}

// DepthToSpace and SpaceToDepth divide dims by blocksize * blocksize (or multiply by it): a blocksize
// that is a multiple of 2^32 squares to 0 in int64 and libonnx divides by zero (fuzz_graph_tools:
// blocksize 2^62, SIGFPE). No real block is wider than a dim of a 2^31-element tensor.
constexpr int64_t kMaxBlocksize = int64_t{1} << 31;

void CheckBlocksize(onnx::InferenceContext& ctx) {
  const onnx::AttributeProto* a = ctx.getAttribute("blocksize");
  const int64_t blocksize = a ? a->i() : 0;
  if (blocksize < 1 || blocksize >= kMaxBlocksize)
    fail_shape_inference("blocksize ", blocksize, " is outside 1..", kMaxBlocksize - 1);
}

// Conv and pool ops (libonnx's convPoolShapeInference) divide the spatial extent by each stride
// without checking it, and with auto_pad SAME_* and no pads they find the residual by subtracting
// the stride from the input dim one step at a time: stride 0 divides by zero, a declared dim of 2^40
// with stride 2 loops 2^39 times. Strides must be >= 1 and that loop short.
constexpr int64_t kMaxSamePadSteps = int64_t{1} << 24;

void CheckConvPoolStrides(onnx::InferenceContext& ctx) {
  std::vector<int64_t> strides;
  if (const onnx::AttributeProto* a = ctx.getAttribute("strides")) strides.assign(a->ints().begin(), a->ints().end());
  for (int64_t s : strides)
    if (s < 1) fail_shape_inference("stride ", s, " is not positive");
  const onnx::AttributeProto* auto_pad = ctx.getAttribute("auto_pad");
  if (auto_pad == nullptr || auto_pad->s() == "VALID" || auto_pad->s() == "NOTSET" || ctx.getAttribute("pads") ||
      ctx.getNumInputs() < 1 || !onnx::hasInputShape(ctx, 0))
    return;
  const auto& shape = ctx.getInputType(0)->tensor_type().shape();
  for (size_t i = 0; i < strides.size() && 2 + static_cast<int>(i) < shape.dim_size(); ++i) {
    const auto& dim = shape.dim(2 + static_cast<int>(i));
    if (strides[i] > 1 && dim.has_dim_value() && dim.dim_value() / strides[i] > kMaxSamePadSteps)
      fail_shape_inference("spatial dim ", i, " of ", dim.dim_value(), " over stride ", strides[i],
                           " is past what SAME padding is inferred for (", kMaxSamePadSteps, " strides)");
  }
}

// SplitToSequence with a scalar split takes the split dim modulo that value: 0 divides by zero.
void CheckScalarSplit(onnx::InferenceContext& ctx) {
  if (ctx.getNumInputs() < 2) return;
  const onnx::TensorProto* split = ctx.getInputData(1);
  if (split == nullptr || split->dims_size() != 0) return;
  std::vector<int64_t> values;
  if (split->data_type() == onnx::TensorProto::INT64) values = onnx::ParseData<int64_t>(split);
  else if (split->data_type() == onnx::TensorProto::INT32) {
    const auto narrow = onnx::ParseData<int32_t>(split);
    values.assign(narrow.begin(), narrow.end());
  }
  if (!values.empty() && values[0] < 1) fail_shape_inference("the scalar split ", values[0], " is not positive");
}

// Reshape with a -1 divides the input's dim product by the target's: both are int64 products that
// libonnx lets wrap, and INT64_MIN / -1 traps. Every known factor on both sides must keep its
// product under 2^62 (no tensor holds that many elements).
constexpr int64_t kMaxElements = int64_t{1} << 62;

bool ProductFits(int64_t* product, int64_t factor) {
  if (factor <= 0) return true;  // 0, -1 and unknown dims are libonnx's to judge
  if (*product > kMaxElements / factor) return false;
  *product *= factor;
  return true;
}

void CheckReshapeProducts(onnx::InferenceContext& ctx) {
  CheckShapeInputLength(ctx, 1);
  int64_t product = 1;
  if (ctx.getNumInputs() >= 1 && onnx::hasInputShape(ctx, 0))
    for (const auto& dim : ctx.getInputType(0)->tensor_type().shape().dim())
      if (dim.has_dim_value() && !ProductFits(&product, dim.dim_value()))
        fail_shape_inference("the input's dims multiply past ", kMaxElements, " elements");
  const onnx::TensorProto* target = ctx.getInputData(1);
  if (target == nullptr || target->data_type() != onnx::TensorProto::INT64) return;
  product = 1;
  for (int64_t v : onnx::ParseData<int64_t>(target))
    if (!ProductFits(&product, v)) fail_shape_inference("the target shape multiplies past ", kMaxElements, " elements");
}

// The checks for (domain, op type), or null when the op's inference function needs none.
using Check = void (*)(onnx::InferenceContext&);
Check CheckFor(const std::string& key) {
  if (key == "LayerNormalization") return CheckLayerNormAxis;
  if (key == "ConvTranspose") return [](onnx::InferenceContext& ctx) { CheckConvRanks(ctx, 1); };
  if (key == "Conv" || key == "ConvInteger") return [](onnx::InferenceContext& ctx) {
    CheckConvRanks(ctx, 1);
    CheckConvPoolStrides(ctx);
  };
  if (key == "QLinearConv") return [](onnx::InferenceContext& ctx) {
    CheckConvRanks(ctx, 3);
    CheckConvPoolStrides(ctx);
  };
  if (key == "MaxPool" || key == "AveragePool" || key == "LpPool") return CheckConvPoolStrides;
  if (key == "ConstantOfShape") return [](onnx::InferenceContext& ctx) { CheckShapeInputLength(ctx, 0); };
  if (key == "Expand") return [](onnx::InferenceContext& ctx) { CheckShapeInputLength(ctx, 1); };
  if (key == "Reshape") return CheckReshapeProducts;
  if (key == "DepthToSpace" || key == "SpaceToDepth") return CheckBlocksize;
  if (key == "SplitToSequence") return CheckScalarSplit;
  if (key == "Scan") return CheckScanAttributes;
  if (key == "Loop") return [](onnx::InferenceContext& ctx) { CheckGraphAttribute(ctx, "body"); };
  if (key == "If") return [](onnx::InferenceContext& ctx) {
    CheckGraphAttribute(ctx, "then_branch");
    CheckGraphAttribute(ctx, "else_branch");
  };
  return nullptr;
}

class Registry final : public onnx::ISchemaRegistry {
 public:
  const onnx::OpSchema* GetSchema(const std::string& key, const int max_inclusive_version,
                                  const std::string& domain) const override {
    const onnx::OpSchema* schema = onnx::OpSchemaRegistry::Schema(key, max_inclusive_version, domain);
    if (!schema || !schema->has_type_and_shape_inference_function()) return schema;
    const bool onnx_domain = domain.empty() || domain == "ai.onnx";
    const Check check = onnx_domain ? CheckFor(key) : nullptr;
    if (!check) return schema;
    std::lock_guard<std::mutex> lock(mu_);
    auto& guarded = guarded_[schema];
    if (!guarded) {
      guarded = std::make_unique<onnx::OpSchema>(*schema);
      guarded->TypeAndShapeInferenceFunction(
          [check, inner = schema->GetTypeAndShapeInferenceFunction()](onnx::InferenceContext& ctx) {
            check(ctx);
            inner(ctx);
          });
    }
    return guarded.get();
  }

 private:
  mutable std::mutex mu_;
  mutable std::map<const onnx::OpSchema*, std::unique_ptr<onnx::OpSchema>> guarded_;
};

}  // namespace

const onnx::ISchemaRegistry* GuardedSchemaRegistry() {
  static const Registry* registry = new Registry();  // never destroyed: schemas outlive callers
  return registry;
}

}  // namespace nuphar
