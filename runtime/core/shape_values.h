// Values the input shapes decide: the shape arithmetic of exported models.
//
// A PyTorch export computes its Reshape targets, Slice bounds and Pad widths at run time:
// Shape -> Gather -> Unsqueeze -> Concat, Mul/Div on int64 scalars, Cast. On Silero VAD v3.1
// such nodes are about a third of the nodes a Run executes, each costing a kernel call for a
// few integers, and a streaming caller feeds the same input shapes on every call. This module
// finds, once per graph, the nodes whose outputs are a function of the shapes of the graph's
// inputs (and, in a body, of the outer values it reads) alone; the frame (graph_plan.h) skips
// them on an execution whose shapes equal its previous successful one's, keeping their outputs
// from then: a Run of the main graph, an If branch on the next Run, a Scan or Loop body on the
// next step.
//
// A value is *shape-decided* when its shape is a function of the input shapes, and
// *value-decided* when its contents are (constants are both). Shape and Size make a
// value-decided output from a shape-decided input; any other op of the table in shape_values.cc
// has shape-decided outputs when its inputs are shape-decided and the inputs whose contents
// set the output shape (Reshape's shape, Slice's bounds, ...) are value-decided, and
// value-decided outputs when all its inputs are value-decided. An op outside the table (NonZero,
// If, Loop, Scan, Random*, ops of other domains, ...) decides nothing: the rule errs towards
// running a node. A partition node (kPartitionOp) is judged by the nodes of its body.
#pragma once

#include <functional>
#include <string>
#include <vector>

namespace onnx {
class GraphProto;
}

namespace nuphar {

/// For each node of `graph` (in its own index order): whether all its outputs are value-decided.
/// `is_constant(name)` tells which values are constants (initializers, load-time folds);
/// `opset(domain)` is the model's opset for a domain. The graph's inputs are shape-decided, and so
/// are `outer_values` (what a body reads from enclosing graphs: the frame keys on their shapes
/// too). The walk follows `order` (a topological order of the node indices).
std::vector<bool> FindValueDecidedNodes(const onnx::GraphProto& graph, const std::vector<int>& order,
                                        const std::function<bool(const std::string&)>& is_constant,
                                        const std::function<int(const std::string&)>& opset,
                                        const std::vector<std::string>& outer_values);

}  // namespace nuphar
