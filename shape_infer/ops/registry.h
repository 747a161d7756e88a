// The table of custom op handlers, keyed on (domain, op_type) (spec S4, §6 item 14).
#pragma once

#include <string>

#include "graph/error.h"

namespace nuphar::shape_infer {

class NodeContext;
using OpHandler = Status (*)(NodeContext& ctx);

/// The handler for (domain, op_type); "" and "ai.onnx" are the same domain. nullptr if none.
OpHandler FindHandler(const std::string& domain, const std::string& op_type);
/// Ops whose ONNX inference is skipped: the handler fills the outputs (spec §2.4).
bool SkipsOnnxInference(const std::string& domain, const std::string& op_type);
/// Ops whose inputs are merged elementwise before ONNX inference (spec §2.3 d, S4).
bool IsMergeOp(const std::string& domain, const std::string& op_type);

// One registration function per op family file.
class HandlerTable;
void RegisterElementwiseHandlers(HandlerTable& t);
void RegisterShapeValueHandlers(HandlerTable& t);
void RegisterReshapeHandlers(HandlerTable& t);
void RegisterSliceGatherHandlers(HandlerTable& t);
void RegisterSliceHandler(HandlerTable& t);
void RegisterConvPoolHandlers(HandlerTable& t);
void RegisterMatMulHandlers(HandlerTable& t);
void RegisterMiscHandlers(HandlerTable& t);
void RegisterControlFlowHandlers(HandlerTable& t);
void RegisterContribHandlers(HandlerTable& t);
void RegisterOpset18Handlers(HandlerTable& t);

class HandlerTable {
 public:
  void Add(const std::string& domain, const std::string& op_type, OpHandler h);
  OpHandler Find(const std::string& domain, const std::string& op_type) const;

 private:
  struct Impl;
  Impl* impl_;
  friend const HandlerTable& Handlers();
  HandlerTable();
};

}  // namespace nuphar::shape_infer
