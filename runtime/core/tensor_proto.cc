// TensorProto <-> Tensor (runtime/core/tensor_proto.h).
#include "runtime/core/tensor_proto.h"

#include <onnx/onnx_pb.h>

#include <cstring>

namespace nuphar {

Expected<Tensor> TensorFromProto(const onnx::TensorProto& proto) {
  const DType dtype = static_cast<DType>(proto.data_type());
  if (!IsNumeric(dtype))
    return Diag::Msg(std::string("tensor '") + proto.name() + "' has type " + DTypeName(dtype) +
                     ", which the runtime does not support");
  std::string packed;  // typed fields only; raw_data is read in place
  auto bytes = TensorBytesView(proto, &packed);
  if (!bytes) return bytes.status();
  Tensor t(dtype, std::vector<int64_t>(proto.dims().begin(), proto.dims().end()));
  if (!bytes->empty()) std::memcpy(t.raw(), bytes->data(), bytes->size());
  return t;
}

onnx::TensorProto TensorToProto(const Tensor& tensor, const std::string& name) {
  return MakeTensor(name, tensor.dtype(), tensor.shape(), tensor.raw(), tensor.bytes());
}

}  // namespace nuphar
