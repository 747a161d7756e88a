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

class Registry final : public onnx::ISchemaRegistry {
 public:
  const onnx::OpSchema* GetSchema(const std::string& key, const int max_inclusive_version,
                                  const std::string& domain) const override {
    const onnx::OpSchema* schema = onnx::OpSchemaRegistry::Schema(key, max_inclusive_version, domain);
    if (!schema || !schema->has_type_and_shape_inference_function()) return schema;
    const bool onnx_domain = domain.empty() || domain == "ai.onnx";
    if (!onnx_domain || key != "LayerNormalization") return schema;
    std::lock_guard<std::mutex> lock(mu_);
    auto& guarded = guarded_[schema];
    if (!guarded) {
      guarded = std::make_unique<onnx::OpSchema>(*schema);
      guarded->TypeAndShapeInferenceFunction([inner = schema->GetTypeAndShapeInferenceFunction()](
                                                 onnx::InferenceContext& ctx) {
        CheckLayerNormAxis(ctx);
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
