// Graph rewrites the runtime applies before compiling a graph: the fusion passes
// (runtime/fusion/) and the JIT partitioner (runtime/jit/). core/ knows only this interface;
// the session hands the rewrites in (ModelContext::rewrites), in order, so core/ includes
// neither fusion/ nor jit/.
#pragma once

#include <functional>
#include <string>

#include "graph/error.h"
#include "runtime/core/tensor.h"

namespace onnx {
class GraphProto;
}

namespace nuphar {

struct ModelContext;

/// Domain of the nodes the runtime's own rewrites create (never written to a model file).
inline constexpr const char* kFusedDomain = "com.nuphar.internal";

/// The value of a name when it is a constant (initializer, Constant node, outer-scope constant).
using ConstantLookup = std::function<const Tensor*(const std::string& name)>;

/// What a rewrite may read besides the graph it rewrites. (Not graph/pass.h's RewriteContext,
/// the editor's and quantizer's: fusions include both headers, and one program may not hold
/// two classes of one name.)
struct GraphRewriteContext {
  const ModelContext& model;
  ConstantLookup constants;
};

struct GraphRewrite {
  std::string name;
  /// Cheap filter: false when the rewrite cannot apply to `graph` (then no copy of it is made).
  std::function<bool(const onnx::GraphProto& graph, const ModelContext& model)> may_apply;
  /// Rewrites `graph` in place, this level only (bodies are rewritten when they are compiled);
  /// returns the number of patterns replaced.
  std::function<Expected<int>(onnx::GraphProto* graph, const GraphRewriteContext& ctx)> apply;
};

}  // namespace nuphar
