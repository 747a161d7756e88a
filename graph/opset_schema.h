// Our own schema table for ONNX opsets 18 to 21: libonnx 1.12 (Debian) stops at opset 17.
//
// # Why a table of our own
// libonnx answers OpSchemaRegistry::Schema(op, 21) with the newest schema it has (Split-13,
// ReduceMax-13, Pad-13, ...). For ops whose signature changed after 17 that answer is wrong:
// Split-18 has num_outputs, every Reduce-18 takes axes as input 1, Pad-18 has a 4th input
// (axes), and ops such as Mish or GroupNormalization have no schema at all. The tools check
// arity, compare versions before raising an opset, and run libonnx's shape inference per node
// from these schemas; each asks this table first.
//
// # What the table holds
// One row per (op, since_version) from 18 to 21 of the ONNX changelog, with the input and
// output counts and whether only type constraints changed (new element types, which leave
// libonnx's older shape inference right) or the signature / semantics did (then libonnx must
// not infer the node; nuphar's own handlers do).
//
// # Newer opsets
// Models importing an ONNX-domain opset above kMaxKnownOpset are refused (CheckOpsetKnown):
// their ops may mean something no part of nuphar-cpp knows.
#pragma once

#include <string>

#include "graph/error.h"

namespace onnx {
class ModelProto;
}

namespace nuphar {

/// The newest ONNX-domain opset nuphar-cpp knows (ONNX 1.16, ONNX Runtime 1.18 to 1.20).
inline constexpr int kMaxKnownOpset = 21;
/// The newest opset libonnx 1.12 has schemas for.
inline constexpr int kLibOnnxMaxOpset = 17;

struct OpSignature {
  const char* op_type;
  int since_version;
  int min_inputs, max_inputs, min_outputs, max_outputs;  ///< kVariadic for "or more"
  bool types_only;  ///< only type constraints changed from the previous version
};
inline constexpr int kVariadic = 1 << 30;

/// The ONNX-domain row of `op_type` in force at `opset` when its version is above 17 (libonnx
/// has no schema of that version), else null: libonnx's schema is then the right one.
const OpSignature* FindNewerSignature(const std::string& op_type, int opset);

/// The version of `op_type` in force at `opset` (ONNX domain): this table's above 17, libonnx's
/// otherwise; 0 when neither knows the op.
int OpSinceVersion(const std::string& op_type, int opset);

/// True when libonnx's per-node shape inference may run for `op_type` at `opset`: the op's
/// version is one libonnx has, or a newer one that changed only type constraints.
bool LibOnnxInfersOp(const std::string& op_type, int opset);

/// Refuses a model whose ONNX-domain opset is above kMaxKnownOpset, naming `origin`.
Status CheckOpsetKnown(const onnx::ModelProto& model, const std::string& origin);

}  // namespace nuphar
