// Pieces Scan, Loop and If share: subgraph type checks, loop-carried values that ping-pong
// between a body's outputs and inputs, and strided slices along one axis of a tensor.
//
// # Why loop-carried values are swapped, not copied
// After an iteration, body output k becomes body input k of the next one. Binding the output
// tensor to the input slot would share its buffer, so the producer's next Output() could not
// reuse it and would allocate every step. Instead the input slot and the output slot exchange
// their tensors: the producer gets back the previous input's buffer and, from the second step
// on, writes into one of two buffers that alternate (ping-pong), with no copy and no allocation.
#pragma once

#include <cstdint>
#include <span>
#include <string>
#include <vector>

#include "graph/error.h"
#include "runtime/core/tensor.h"

namespace onnx {
class GraphProto;
}

namespace nuphar {

class GraphPlan;
class Frame;
class NodeInfo;
class KernelContext;

/// Refuses a subgraph whose inputs or outputs are not tensors (sequences, optionals, maps).
Status CheckTensorOnlyGraph(const NodeInfo& node, const onnx::GraphProto& g, const std::string& attr);

/// Declared element type and shape of graph output i (dims -1 where unknown), used for the
/// empty outputs of zero iterations.
struct DeclaredValue {
  DType dtype = DType::kUndefined;
  std::vector<int64_t> dims;
  bool static_shape = false;
};
DeclaredValue DeclaredOutput(const onnx::GraphProto& g, int i);

/// The loop-carried values of a body: input in[k] of the next iteration is output out[k].
class CarriedValues {
 public:
  CarriedValues() = default;
  /// Load time: decides per value whether swapping slots is safe (the output lives in a slot of
  /// its own: not a graph input, constant or outer value, and not shared with another value).
  CarriedValues(const GraphPlan& body, std::vector<int> inputs, std::vector<int> outputs);

  size_t size() const { return inputs_.size(); }
  /// Binds the initial values (shallow).
  void Bind(Frame& body, std::span<const Tensor* const> initial) const;
  /// After an iteration: makes each output the next input. A value that shares a buffer with
  /// one of `rewritten` (tensors the caller overwrites in place every step) is cloned.
  void Advance(Frame& body, std::span<const Tensor* const> rewritten) const;
  /// After the last iteration, for the body frame that `ctx` keeps for subgraph 0
  /// (Frame::SubgraphFrame): unbinds every body input, and the initial values (the node's inputs
  /// from `first_initial_input` on, one per carried value) that the swaps left in output slots,
  /// so that the kept frame holds no buffer of the enclosing graph's.
  void Unbind(KernelContext& ctx, const GraphPlan& body_plan, size_t first_initial_input) const;
  /// The current value k (what the next iteration would read).
  const Tensor& Current(Frame& body, size_t k) const;

 private:
  std::vector<int> inputs_, outputs_;  ///< body input index, body output index
  std::vector<bool> swap_;
};

/// Slices along one axis of a tensor with shape [outer..., len, inner...]: slice p is `outer`
/// blocks of `inner` bytes at base + o * outer_stride + p * inner.
struct AxisSlices {
  char* base = nullptr;
  int64_t outer = 1, len = 0, inner = 0, outer_stride = 0;

  /// `shape` sliced along `axis` (already normalized) for elements of `elem_bytes`.
  static AxisSlices Of(const void* data, std::span<const int64_t> shape, int64_t axis, size_t elem_bytes);
  void Gather(int64_t p, void* dst) const;        ///< slice p -> contiguous dst
  void Scatter(int64_t p, const void* src) const;  ///< contiguous src -> slice p
};

/// `shape` without dimension `axis`.
std::vector<int64_t> ShapeWithout(std::span<const int64_t> shape, int64_t axis);
/// `shape` with `len` inserted at `axis`.
std::vector<int64_t> ShapeWith(std::span<const int64_t> shape, int64_t axis, int64_t len);

}  // namespace nuphar
