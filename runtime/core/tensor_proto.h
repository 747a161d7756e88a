// Conversions between runtime Tensors and onnx::TensorProto (kept apart from tensor.h so that
// kernels do not include protobuf headers).
#pragma once

#include <string>

#include "graph/error.h"
#include "runtime/core/tensor.h"

namespace onnx {
class TensorProto;
}

namespace nuphar {

Expected<Tensor> TensorFromProto(const onnx::TensorProto& proto);
onnx::TensorProto TensorToProto(const Tensor& tensor, const std::string& name);

}  // namespace nuphar
