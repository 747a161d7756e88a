// Checking wrappers around libonnx inference functions (graph/onnx_infer_guard.h).
#include "graph/onnx_infer_guard.h"

#include <onnx/defs/schema.h>
#include <onnx/defs/shape_inference.h>

#include <cstdint>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <utility>

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

// The checks for (domain, op type), or null when the op's inference function needs none.
using Check = void (*)(onnx::InferenceContext&);
Check CheckFor(const std::string& key) {
  if (key == "LayerNormalization") return CheckLayerNormAxis;
  if (key == "Conv" || key == "ConvInteger" || key == "ConvTranspose") return [](onnx::InferenceContext& ctx) { CheckConvRanks(ctx, 1); };
  if (key == "QLinearConv") return [](onnx::InferenceContext& ctx) { CheckConvRanks(ctx, 3); };
  if (key == "ConstantOfShape") return [](onnx::InferenceContext& ctx) { CheckShapeInputLength(ctx, 0); };
  if (key == "Expand" || key == "Reshape") return [](onnx::InferenceContext& ctx) { CheckShapeInputLength(ctx, 1); };
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
