// Graph rewrites the runtime applies before compiling a graph: the fusion passes
// (runtime/fusion/) and the JIT partitioner (runtime/jit/). Each is a graph/pass.h GraphPass
// that rewrites one graph level at once (Order kEachGraphByDriver); GraphPlan hands it every
// graph it compiles, main graph and bodies, with a GraphRewriteContext. core/ knows only this
// interface; the session hands the passes in (ModelContext::rewrites), in order, so core/
// includes neither fusion/ nor jit/.
#pragma once

#include <functional>
#include <string>
#include <utility>

#include "graph/error.h"
#include "graph/pass.h"
#include "runtime/core/tensor.h"

namespace onnx {
class GraphProto;
}

namespace nuphar {

struct ModelContext;

/// Domain of the nodes the runtime's own rewrites create (never written to a model file).
inline constexpr const char* kFusedDomain = "com.nuphar.internal";
/// Op of a partition node (domain kFusedDomain): attribute `body` holds the nodes it replaces,
/// whose inputs and outputs match the node's by position (the JIT partitioner's, runtime/jit/).
inline constexpr const char* kPartitionOp = "JitKernel";
/// Op of a whole If (domain kFusedDomain): an If with its then_branch and else_branch, whose
/// inputs after the condition are values its branches read (the JIT partitioner's, runtime/jit/).
inline constexpr const char* kWholeIfOp = "JitIf";

/// The value of a name when it is a constant (initializer, Constant node, outer-scope constant).
using ConstantLookup = std::function<const Tensor*(const std::string& name)>;

/// What a runtime pass may read besides the graph it rewrites: the model's facts and the
/// values of constants. (graph/pass.h's RewriteContext is the node-wise passes' context.)
struct GraphRewriteContext final : PassContext {
  GraphRewriteContext(const ModelContext& model, ConstantLookup constants)
      : model(model), constants(std::move(constants)) {}
  const ModelContext& model;
  ConstantLookup constants;
};

/// The base of the runtime's passes: graph-level, the context is GraphRewriteContext.
class RuntimeGraphPass : public GraphPass {
 public:
  SubgraphOrder Order() const final { return SubgraphOrder::kEachGraphByDriver; }
  Expected<int> ApplyToGraph(onnx::GraphProto* graph, PassContext& ctx) final {
    auto* runtime = dynamic_cast<GraphRewriteContext*>(&ctx);
    if (runtime == nullptr) return Diag::Msg("runtime pass '" + Name() + "' needs the runtime's GraphRewriteContext");
    return RewriteGraph(graph, *runtime);
  }
  /// Rewrites `graph` in place, this level only (bodies are handed in when they are compiled);
  /// returns the number of patterns replaced.
  virtual Expected<int> RewriteGraph(onnx::GraphProto* graph, const GraphRewriteContext& ctx) = 0;
};

}  // namespace nuphar
