// One reduction node -> reduction kernel IR (reduce_ir.h).
#include "runtime/jit/reduce_ir.h"

#include <onnx/onnx_pb.h>

#include <algorithm>
#include <cstdio>

#include "graph/node_builder.h"

namespace nuphar::jit {
namespace {

struct ReduceOpInfo {
  const char* onnx;
  ReduceKind kind;
};

constexpr ReduceOpInfo kReduceOps[] = {
    {"ReduceSum", ReduceKind::kSum},          {"ReduceMean", ReduceKind::kMean},
    {"ReduceMax", ReduceKind::kMax},          {"ReduceMin", ReduceKind::kMin},
    {"ReduceL2", ReduceKind::kL2},            {"ReduceSumSquare", ReduceKind::kSumSquare},
    {"GlobalAveragePool", ReduceKind::kGlobalAverage}, {"GlobalMaxPool", ReduceKind::kGlobalMax},
    {"Softmax", ReduceKind::kSoftmax},        {"LogSoftmax", ReduceKind::kLogSoftmax},
    {"MaxPool", ReduceKind::kMaxPool},        {"AveragePool", ReduceKind::kAveragePool},
};

const ReduceOpInfo* FindReduceOp(const std::string& op_type) {
  for (const ReduceOpInfo& o : kReduceOps)
    if (op_type == o.onnx) return &o;
  return nullptr;
}

bool IsReduceOp(ReduceKind k) { return k <= ReduceKind::kSumSquare; }

// The pool attributes the generator takes: a 2-D window, strides, no padding, dilation or ceil mode.
Status ReadPoolWindow(const onnx::NodeProto& node, ReduceIR* ir) {
  const std::vector<int64_t> kernel = AttrInts(node, "kernel_shape").value_or(std::vector<int64_t>{});
  const std::vector<int64_t> strides = AttrInts(node, "strides").value_or(std::vector<int64_t>{1, 1});
  const std::vector<int64_t> pads = AttrInts(node, "pads").value_or(std::vector<int64_t>{});
  const std::vector<int64_t> dilations = AttrInts(node, "dilations").value_or(std::vector<int64_t>{});
  const std::string auto_pad = AttrString(node, "auto_pad", "NOTSET");
  if (ir->rank != 4 || kernel.size() != 2) return Diag::Node(node, "jit: a pool that is not 2-D");
  if (strides.size() != 2 || kernel[0] < 1 || kernel[1] < 1 || strides[0] < 1 || strides[1] < 1)
    return Diag::Node(node, "jit: a pool window or stride that is not positive");
  // The generator multiplies window sides (the average's cell count) and strides by output
  // indices in int64: sides past 2^31 overflow there (fuzz_session_create: kernel_shape
  // [INT64_MAX, 2]). No input that large can be pooled anyway.
  constexpr int64_t kMaxSide = int64_t{1} << 31;
  if (kernel[0] > kMaxSide || kernel[1] > kMaxSide || strides[0] > kMaxSide || strides[1] > kMaxSide)
    return Diag::Node(node, "jit: a pool window or stride past 2^31");
  if (std::any_of(pads.begin(), pads.end(), [](int64_t p) { return p != 0; }) ||
      (auto_pad != "NOTSET" && auto_pad != "VALID"))
    return Diag::Node(node, "jit: a padded pool");
  if (std::any_of(dilations.begin(), dilations.end(), [](int64_t d) { return d != 1; }))
    return Diag::Node(node, "jit: a dilated pool");
  if (AttrInt(node, "ceil_mode", 0) != 0) return Diag::Node(node, "jit: a pool in ceil mode");
  ir->kernel_h = kernel[0];
  ir->kernel_w = kernel[1];
  ir->stride_h = strides[0];
  ir->stride_w = strides[1];
  ir->begin = 2;  // [N*C, H, W]
  ir->end = 3;
  return Status::OK();
}

// Reduce ops read their axes from input 1 from opset 18 (ReduceSum from 13), the reference's rule.
bool AxesFromInput(const std::string& op_type, int opset) {
  return (op_type == "ReduceSum" && opset >= 13) || opset >= 18;
}

// The product of dims [from, to) when all are static, else -1.
int64_t StaticProduct(const onnx::TensorShapeProto& s, int64_t from, int64_t to) {
  int64_t p = 1;
  for (int64_t d = from; d < to; ++d) {
    const auto& dim = s.dim(static_cast<int>(d));
    if (!dim.has_dim_value() || dim.dim_value() < 0) return -1;
    p *= dim.dim_value();
  }
  return p;
}

// Exact text of a float (the IR text is the kernel's identity).
std::string Hex(float v) {
  char buf[32];
  std::snprintf(buf, sizeof(buf), "%a", v);
  return buf;
}

}  // namespace

bool HasReduceGenerator(const std::string& op_type) { return FindReduceOp(op_type) != nullptr; }

bool IsReduceAxesInput(const onnx::NodeProto& node, int opset, int k) {
  const ReduceOpInfo* info = FindReduceOp(node.op_type());
  return info && IsReduceOp(info->kind) && k == 1 && AxesFromInput(node.op_type(), opset);
}

std::string ReduceIR::ToText() const {
  const char* name = kind == ReduceKind::kLayerNorm ? "LayerNorm" : "?";
  for (const ReduceOpInfo& o : kReduceOps)
    if (o.kind == kind) name = o.onnx;
  auto dim = [](int64_t v) { return v < 0 ? std::string("?") : std::to_string(v); };
  return std::string(name) + " [" + std::to_string(begin) + ", " + std::to_string(end) + ") of rank " +
         std::to_string(rank) + " keepdims " + (keepdims ? "1" : "0") + " outer " + dim(outer) + " n " + dim(n) +
         " inner " + dim(inner) + (kind == ReduceKind::kLayerNorm ? " epsilon " + Hex(epsilon) : std::string()) +
         (IsPool(kind) ? " window " + std::to_string(kernel_h) + "x" + std::to_string(kernel_w) + " stride " +
                             std::to_string(stride_h) + "x" + std::to_string(stride_w)
                       : std::string()) +
         "\n";
}

size_t ReduceIR::OutputShape(std::span<const int64_t> in, int64_t* out) const {
  if (kind == ReduceKind::kSoftmax || kind == ReduceKind::kLogSoftmax || kind == ReduceKind::kLayerNorm) {
    std::copy(in.begin(), in.end(), out);
    return in.size();
  }
  if (IsPool(kind)) {  // floor mode, no padding: (in - kernel) / stride + 1 (Fits checked in >= kernel)
    out[0] = in[0];
    out[1] = in[1];
    out[2] = (in[2] - kernel_h) / stride_h + 1;
    out[3] = (in[3] - kernel_w) / stride_w + 1;
    return 4;
  }
  size_t rank = 0;
  for (int64_t d = 0; d < static_cast<int64_t>(in.size()); ++d) {
    const bool reduced = d >= begin && d < end;
    if (!reduced) out[rank++] = in[static_cast<size_t>(d)];
    else if (keepdims) out[rank++] = 1;
  }
  return rank;
}

Expected<ReduceIR> BuildReduceIR(const onnx::NodeProto& node, const onnx::TensorShapeProto& input, int opset,
                                 const std::vector<int64_t>* axes_input) {
  const ReduceOpInfo* info = FindReduceOp(node.op_type());
  if (!info) return Diag::Node(node, "jit: op '" + node.op_type() + "' has no reduction code generator");
  if (node.output_size() != 1) return Diag::Node(node, "jit: expected one output");
  if (node.input_size() < 1 || node.input(0).empty()) return Diag::Node(node, "jit: no input");
  ReduceIR ir;
  ir.kind = info->kind;
  ir.node = node.name();
  ir.rank = input.dim_size();
  const int64_t rank = ir.rank;
  if (rank > kMaxReduceRank) return Diag::Node(node, "jit: rank " + std::to_string(rank) + " is above 8");
  if (IsReduceOp(ir.kind)) {
    std::vector<int64_t> axes;
    if (AxesFromInput(node.op_type(), opset)) {
      if (node.input_size() > 1 && !node.input(1).empty()) {
        if (!axes_input) return Diag::Node(node, "jit: the axes input is not a constant");
        axes = *axes_input;
      }
      if (axes.empty() && AttrInt(node, "noop_with_empty_axes", 0) != 0)
        return Diag::Node(node, "jit: no axes with noop_with_empty_axes=1 (an identity)");
    } else {
      if (node.input_size() > 1) return Diag::Node(node, "jit: an axes input before opset 18");
      axes = AttrInts(node, "axes").value_or(std::vector<int64_t>{});
    }
    if (axes.empty()) {
      ir.begin = 0;
      ir.end = rank;
    } else {
      for (int64_t& a : axes) {
        if (a < -rank || a >= rank) return Diag::Node(node, "jit: axis " + std::to_string(a) + " is out of range");
        if (a < 0) a += rank;
      }
      std::sort(axes.begin(), axes.end());
      if (std::adjacent_find(axes.begin(), axes.end()) != axes.end())
        return Diag::Node(node, "jit: an axis is listed twice");
      if (axes.back() - axes.front() + 1 != static_cast<int64_t>(axes.size()))
        return Diag::Node(node, "jit: the reduced axes are not one contiguous run");
      ir.begin = axes.front();
      ir.end = axes.back() + 1;
    }
    ir.keepdims = AttrInt(node, "keepdims", 1) != 0;
  } else if (ir.kind == ReduceKind::kGlobalAverage || ir.kind == ReduceKind::kGlobalMax) {
    if (rank < 2) return Diag::Node(node, "jit: global pooling of rank below 2");
    ir.begin = 2;
    ir.end = rank;
  } else if (IsPool(ir.kind)) {
    NUPHAR_RETURN_IF_ERROR(ReadPoolWindow(node, &ir));
  } else {  // Softmax / LogSoftmax: below opset 13 the input is coerced to 2-D at `axis`
    if (rank < 1) return Diag::Node(node, "jit: a scalar Softmax");
    const bool coerce_2d = opset < 13;
    int64_t axis = AttrInt(node, "axis", coerce_2d ? 1 : -1);
    if (axis < -rank || axis >= rank) return Diag::Node(node, "jit: axis " + std::to_string(axis) + " is out of range");
    if (axis < 0) axis += rank;
    ir.begin = axis;
    ir.end = coerce_2d ? rank : axis + 1;
  }
  ir.outer = StaticProduct(input, 0, ir.begin);
  ir.n = StaticProduct(input, ir.begin, ir.end);
  ir.inner = StaticProduct(input, ir.end, rank);
  return ir;
}

LayerNormNodes FindLayerNormNodes(const onnx::GraphProto& body) {
  LayerNormNodes c;
  if (body.node_size() != 7) return {};
  // In graph order the chain is mean, sub, pow, variance, add, sqrt, div (each reads the one before).
  const char* ops[] = {"ReduceMean", "Sub", "Pow", "ReduceMean", "Add", "Sqrt", "Div"};
  const onnx::NodeProto** slots[] = {&c.mean, &c.sub, &c.pow, &c.variance, &c.add, &c.sqrt, &c.div};
  for (int k = 0; k < 7; ++k) {
    if (body.node(k).op_type() != ops[k]) return {};
    *slots[k] = &body.node(k);
  }
  return c;
}

Expected<ReduceIR> BuildLayerNormIR(const LayerNormNodes& c, const onnx::TensorShapeProto& input, int opset,
                                    float exponent, float epsilon) {
  if (!c.mean) return Diag::Msg("jit: not a layer-norm chain");
  auto out = [](const onnx::NodeProto* n) { return n->output_size() == 1 ? n->output(0) : std::string(); };
  auto in = [](const onnx::NodeProto* n, int k) { return k < n->input_size() ? n->input(k) : std::string(); };
  const std::string x = in(c.mean, 0), m = out(c.mean), d = out(c.sub);
  const std::string e_in = in(c.add, 0) == out(c.variance) ? in(c.add, 1) : in(c.add, 0);
  if (x.empty() || in(c.sub, 0) != x || in(c.sub, 1) != m || in(c.pow, 0) != d || in(c.variance, 0) != out(c.pow) ||
      (in(c.add, 0) != out(c.variance) && in(c.add, 1) != out(c.variance)) || e_in.empty() ||
      in(c.sqrt, 0) != out(c.add) || in(c.div, 0) != d || in(c.div, 1) != out(c.sqrt) || c.div->input_size() != 2)
    return Diag::Node(*c.mean, "jit: the nodes after this ReduceMean are not a layer-norm chain");
  if (exponent != 2.0f) return Diag::Node(*c.pow, "jit: a layer norm squares with Pow(d, 2)");
  NUPHAR_ASSIGN_OR_RETURN(ReduceIR mean, BuildReduceIR(*c.mean, input, opset, nullptr));
  NUPHAR_ASSIGN_OR_RETURN(ReduceIR variance, BuildReduceIR(*c.variance, input, opset, nullptr));
  if (mean.kind != ReduceKind::kMean || !mean.keepdims || mean.end != mean.rank || mean.begin == mean.end)
    return Diag::Node(*c.mean, "jit: a layer norm must average trailing axes with keepdims=1");
  if (variance.begin != mean.begin || variance.end != mean.end || !variance.keepdims)
    return Diag::Node(*c.variance, "jit: the variance is not taken over the mean's axes");
  mean.kind = ReduceKind::kLayerNorm;
  mean.epsilon = epsilon;
  return mean;
}

}  // namespace nuphar::jit
