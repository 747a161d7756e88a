// Shape inference test helpers: read inferred shapes back as text and run inference. The
// model builder itself is tests/modellib/model_builder.h (one for all tests).
#pragma once

#include <onnx/onnx_pb.h>

#include <string>
#include <vector>

#include "shape_infer/shape_infer.h"
#include "tests/modellib/model_builder.h"

namespace nuphar::testing {

inline const onnx::ValueInfoProto* FindValue(const onnx::GraphProto& g, const std::string& name) {
  for (const auto& vi : g.value_info())
    if (vi.name() == name) return &vi;
  for (const auto& vi : g.output())
    if (vi.name() == name) return &vi;
  for (const auto& vi : g.input())
    if (vi.name() == name) return &vi;
  return nullptr;
}

/// "b,s,32" (literals plain, dim_params as printed, unknown "?"); "<none>" / "<norank>".
inline std::string ShapeStr(const onnx::GraphProto& g, const std::string& name) {
  const onnx::ValueInfoProto* vi = FindValue(g, name);
  if (!vi || !vi->type().has_tensor_type()) return "<none>";
  if (!vi->type().tensor_type().has_shape()) return "<norank>";
  std::string s;
  for (const auto& d : vi->type().tensor_type().shape().dim()) {
    if (!s.empty()) s += ",";
    s += d.has_dim_value() ? std::to_string(d.dim_value()) : (d.has_dim_param() ? d.dim_param() : "?");
  }
  return s;
}

inline int32_t ElemType(const onnx::GraphProto& g, const std::string& name) {
  const onnx::ValueInfoProto* vi = FindValue(g, name);
  return vi && vi->type().has_tensor_type() ? vi->type().tensor_type().elem_type() : -1;
}

inline ShapeInferResult MustInfer(onnx::ModelProto& m, ShapeInferOptions opt = {}) {
  auto r = InferShapes(&m, opt);
  if (!r.ok()) {
    ShapeInferResult bad;
    bad.outcome = InferOutcome::kIncomplete;
    bad.unknown_values = {"<error: " + r.message() + ">"};
    return bad;
  }
  return *r;
}

}  // namespace nuphar::testing
