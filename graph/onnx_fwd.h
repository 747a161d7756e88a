// Forward declarations of the ONNX protobuf messages, so graph/ headers name them without
// including onnx_pb.h (STYLE R1: #include as little as possible).
#pragma once

namespace onnx {
class AttributeProto;
class GraphProto;
class ModelProto;
class NodeProto;
class TensorProto;
class TensorShapeProto;
class TypeProto;
class ValueInfoProto;
}  // namespace onnx
