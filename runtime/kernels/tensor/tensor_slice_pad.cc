// Slice (a strided view copied out), Pad (an index-mapped copy with constant, edge, reflect or
// wrap borders; negative pads crop; Pad-18 axes) and CenterCropPad-18 (the same copy, centred).
#include <algorithm>

#include "runtime/kernels/tensor/tensor_common.h"

namespace nuphar::tensor_kernels {
namespace {

// Slice: starts/ends/axes from attributes (opset < 10) or inputs 1..4 (opset >= 10, with steps).
// The slice parameters: starts, ends, axes (default 0..n-1) and steps (default 1), all of one
// length n once defaulted.
struct SliceParams {
  std::vector<int64_t> starts, ends, axes, steps;
  Status Default() {
    if (axes.empty())
      for (size_t i = 0; i < starts.size(); ++i) axes.push_back(static_cast<int64_t>(i));
    if (steps.empty()) steps.assign(starts.size(), 1);
    if (ends.size() != starts.size() || axes.size() != starts.size() || steps.size() != starts.size())
      return Diag::Msg("starts, ends, axes and steps have different lengths");
    return Status::OK();
  }
};

// Slice: parameters from attributes (opset < 10) or inputs 1-4, read at load when they are
// constants (Silero slices its STFT and states with constant bounds every frame); shapes and
// strides on the stack up to rank 16.
class SliceKernel final : public OpKernel {
 public:
  SliceKernel(bool from_inputs, SliceParams params, Status params_status)
      : from_inputs_(from_inputs), params_(std::move(params)), params_status_(std::move(params_status)) {}

  Status Compute(KernelContext& ctx) const override {
    const Tensor* x = ctx.input(0);
    if (!x) return Diag::Msg("input 'data' is missing");
    SliceParams fed;
    const SliceParams* p = &params_;
    if (from_inputs_) {
      NUPHAR_ASSIGN_OR_RETURN(fed.starts, InputAsInt64(ctx, 1, "starts"));
      NUPHAR_ASSIGN_OR_RETURN(fed.ends, InputAsInt64(ctx, 2, "ends"));
      if (ctx.input(3)) {
        NUPHAR_ASSIGN_OR_RETURN(fed.axes, InputAsInt64(ctx, 3, "axes"));
      }
      if (ctx.input(4)) {
        NUPHAR_ASSIGN_OR_RETURN(fed.steps, InputAsInt64(ctx, 4, "steps"));
      }
      NUPHAR_RETURN_IF_ERROR(fed.Default());
      p = &fed;
    } else {
      NUPHAR_RETURN_IF_ERROR(Status(params_status_));
    }

    const int64_t rank = x->rank();
    DimsBuffer shape_buffer(static_cast<size_t>(rank)), stride_buffer(static_cast<size_t>(rank)),
        seen_buffer(static_cast<size_t>(rank));
    int64_t* out_shape = shape_buffer.data();
    int64_t* strides = stride_buffer.data();
    int64_t* seen = seen_buffer.data();
    int64_t stride = 1;
    for (int64_t d = rank; d-- > 0;) {
      out_shape[d] = x->dim(d);
      strides[d] = stride;
      stride *= x->dim(d);
      seen[d] = 0;
    }
    int64_t base = 0;
    for (size_t i = 0; i < p->starts.size(); ++i) {
      NUPHAR_ASSIGN_OR_RETURN(const int64_t axis, NormalizeAxis(p->axes[i], rank));
      if (seen[axis]) return Diag::Msg("axis " + std::to_string(p->axes[i]) + " is repeated");
      seen[axis] = 1;
      const int64_t step = p->steps[i];
      if (step == 0) return Diag::Msg("steps must not be 0");
      const SliceRange range = ResolveSliceAxis(p->starts[i], p->ends[i], step, x->dim(axis));
      out_shape[axis] = range.count;
      if (range.count > 0) base += range.start * strides[axis];
      strides[axis] *= step;
    }
    const std::span<const int64_t> shape(out_shape, static_cast<size_t>(rank));
    Tensor* y = ctx.Output(0, x->dtype(), shape);
    if (y->size() == 0) return Status::OK();
    const size_t elem = DTypeSize(x->dtype());
    StridedCopy(y->raw(), static_cast<const char*>(x->raw()) + base * static_cast<int64_t>(elem), shape,
                std::span<const int64_t>(strides, static_cast<size_t>(rank)), elem);
    return Status::OK();
  }

 private:
  bool from_inputs_;          ///< read the parameters from inputs 1-4 at run time
  SliceParams params_;        ///< otherwise these (attributes or constant inputs), defaulted
  Status params_status_;      ///< and the error of defaulting them, reported by every Run
};

enum class PadMode { kConstant, kReflect, kEdge, kWrap };  // wrap: Pad-19

// Source offset (in elements, scaled by `stride`) of output position `o` along one dim, or -1
// for the constant fill. `in` > 0 for edge and reflect (checked by the caller).
int64_t PadSource(int64_t o, int64_t begin, int64_t in, int64_t stride, PadMode mode) {
  int64_t i = o - begin;
  if (i >= 0 && i < in) return i * stride;
  switch (mode) {
    case PadMode::kConstant: return -1;
    case PadMode::kEdge: return std::clamp(i, int64_t{0}, in - 1) * stride;
    case PadMode::kWrap: return ((i % in + in) % in) * stride;
    case PadMode::kReflect: {
      if (in == 1) return 0;
      const int64_t period = 2 * (in - 1);  // reflection repeats when the pad exceeds the dim
      i %= period;
      if (i < 0) i += period;
      return (i < in ? i : period - i) * stride;
    }
  }
  return -1;
}

// Pad: pads/value from attributes (opset < 11) or inputs 1 and 2 (opset >= 11); Pad-18's
// optional input 3 names the axes the pads apply to (the others get none).
class PadKernel final : public OpKernel {
 public:
  PadKernel(PadMode mode, bool from_inputs, std::vector<int64_t> pads, float value)
      : mode_(mode), from_inputs_(from_inputs), attr_pads_(std::move(pads)), attr_value_(value) {}

  Status Compute(KernelContext& ctx) const override {
    const Tensor* x = ctx.input(0);
    if (!x) return Diag::Msg("input 'data' is missing");
    std::vector<int64_t> pads = attr_pads_;
    if (from_inputs_) {
      NUPHAR_ASSIGN_OR_RETURN(pads, InputAsInt64(ctx, 1, "pads"));
    }
    const int64_t rank = x->rank();
    if (from_inputs_ && ctx.input(3)) {
      NUPHAR_ASSIGN_OR_RETURN(const std::vector<int64_t> axes, InputAsInt64(ctx, 3, "axes"));
      if (pads.size() != 2 * axes.size())
        return Diag::Msg("pads has " + std::to_string(pads.size()) + " entries for " + std::to_string(axes.size()) +
                         " axes; 2 * axes expected");
      std::vector<int64_t> full(static_cast<size_t>(2 * rank), 0);
      for (size_t k = 0; k < axes.size(); ++k) {
        NUPHAR_ASSIGN_OR_RETURN(const int64_t a, NormalizeAxis(axes[k], rank));
        full[static_cast<size_t>(a)] = pads[k];
        full[static_cast<size_t>(a + rank)] = pads[k + axes.size()];
      }
      pads = std::move(full);
    }
    if (static_cast<int64_t>(pads.size()) != 2 * rank)
      return Diag::Msg("pads has " + std::to_string(pads.size()) + " entries; 2 * rank = " +
                       std::to_string(2 * rank) + " expected");
    uint64_t fill = 0;  // the fill element's bytes
    NUPHAR_RETURN_IF_ERROR(FillValue(ctx, x->dtype(), &fill));

    const std::vector<int64_t> strides = ContiguousStrides(x->shape());
    std::vector<int64_t> out_shape(static_cast<size_t>(rank));
    std::vector<std::vector<int64_t>> maps(static_cast<size_t>(rank));
    for (int64_t k = 0; k < rank; ++k) {
      const size_t uk = static_cast<size_t>(k);
      const int64_t in = x->dim(k), begin = pads[uk], end = pads[uk + static_cast<size_t>(rank)];
      out_shape[uk] = in + begin + end;
      if (out_shape[uk] < 0)
        return Diag::Msg("pads " + ShapeToString(pads) + " crop more than dim " + std::to_string(k) + " of " +
                         ShapeToString(x->shape()));
      if (in == 0 && out_shape[uk] > 0 && mode_ != PadMode::kConstant)
        return Diag::Msg("edge, reflect and wrap padding need a non-empty dim " + std::to_string(k));
      maps[uk].resize(static_cast<size_t>(out_shape[uk]));
      for (int64_t o = 0; o < out_shape[uk]; ++o) maps[uk][static_cast<size_t>(o)] = PadSource(o, begin, in, strides[uk], mode_);
    }
    Tensor* y = ctx.Output(0, x->dtype(), out_shape);
    IndexMapCopy(y->raw(), x->raw(), maps, DTypeSize(x->dtype()), &fill);
    return Status::OK();
  }

 private:
  // The constant value as one element of `dtype`: input 2 (opset >= 11, default 0) or the
  // float 'value' attribute converted to the data type.
  Status FillValue(KernelContext& ctx, DType dtype, uint64_t* fill) const {
    if (mode_ != PadMode::kConstant) return Status::OK();
    if (from_inputs_) {
      const Tensor* v = ctx.input(2);
      if (!v) return Status::OK();
      if (v->dtype() != dtype || v->size() != 1)
        return Diag::Msg("constant_value must be one element of the data type");
      std::memcpy(fill, v->raw(), DTypeSize(dtype));
      return Status::OK();
    }
    if (dtype == DType::kFloat16) {
      const uint16_t h = FloatToHalf(attr_value_);
      std::memcpy(fill, &h, sizeof(h));
      return Status::OK();
    }
    return VisitNumeric(dtype, [&](auto tag) {
      const auto v = static_cast<decltype(tag)>(attr_value_);
      std::memcpy(fill, &v, sizeof(v));
      return Status::OK();
    });
  }

  PadMode mode_;
  bool from_inputs_;
  std::vector<int64_t> attr_pads_;
  float attr_value_;
};

// CenterCropPad-18: each listed axis (all by default) becomes shape[k] long, centred: a longer
// target pads with zeros, (diff / 2) before and the rest after; a shorter one crops from
// (diff / 2). ONNX's reference floors both offsets, and so does ONNX Runtime.
class CenterCropPadKernel final : public OpKernel {
 public:
  explicit CenterCropPadKernel(std::vector<int64_t> axes) : axes_(std::move(axes)) {}

  Status Compute(KernelContext& ctx) const override {
    const Tensor* x = ctx.input(0);
    if (!x) return Diag::Msg("input 'input_data' is missing");
    NUPHAR_ASSIGN_OR_RETURN(const std::vector<int64_t> target, InputAsInt64(ctx, 1, "shape"));
    const int64_t rank = x->rank();
    std::vector<int64_t> axes = axes_;
    if (axes.empty())
      for (int64_t k = 0; k < rank; ++k) axes.push_back(k);
    if (target.size() != axes.size())
      return Diag::Msg("shape has " + std::to_string(target.size()) + " entries for " + std::to_string(axes.size()) + " axes");
    std::vector<int64_t> out_shape = x->shape();
    std::vector<int64_t> shift(static_cast<size_t>(rank), 0);  // input index = output index + shift
    for (size_t i = 0; i < axes.size(); ++i) {
      NUPHAR_ASSIGN_OR_RETURN(const int64_t a, NormalizeAxis(axes[i], rank));
      if (target[i] < 0) return Diag::Msg("shape entries must be non-negative");
      const int64_t in = x->dim(a);
      out_shape[static_cast<size_t>(a)] = target[i];
      shift[static_cast<size_t>(a)] = in >= target[i] ? (in - target[i]) / 2 : -((target[i] - in) / 2);
    }
    const std::vector<int64_t> strides = ContiguousStrides(x->shape());
    std::vector<std::vector<int64_t>> maps(static_cast<size_t>(rank));
    for (size_t k = 0; k < maps.size(); ++k) {
      maps[k].resize(static_cast<size_t>(out_shape[k]));
      for (int64_t o = 0; o < out_shape[k]; ++o) {
        const int64_t i = o + shift[k];
        maps[k][static_cast<size_t>(o)] = i >= 0 && i < x->dim(static_cast<int64_t>(k)) ? i * strides[k] : -1;
      }
    }
    Tensor* y = ctx.Output(0, x->dtype(), out_shape);
    const uint64_t zero = 0;
    IndexMapCopy(y->raw(), x->raw(), maps, DTypeSize(x->dtype()), &zero);
    return Status::OK();
  }

 private:
  std::vector<int64_t> axes_;
};

Expected<std::unique_ptr<OpKernel>> CreateCenterCropPad(const NodeInfo& node) {
  NUPHAR_RETURN_IF_ERROR(CheckMovableInput(node, 0));
  if (!node.has_input(1)) return node.Error("input 'shape' is missing");
  return MakeKernel<CenterCropPadKernel>(node.GetInts("axes"));
}

Expected<std::unique_ptr<OpKernel>> CreateSlice(const NodeInfo& node) {
  NUPHAR_RETURN_IF_ERROR(CheckMovableInput(node, 0));
  const bool from_inputs = node.opset() >= 10;
  if (from_inputs && (!node.has_input(1) || !node.has_input(2))) return node.Error("inputs 'starts' and 'ends' are required");
  if (!from_inputs && (!node.has_attr("starts") || !node.has_attr("ends")))
    return node.Error("attributes 'starts' and 'ends' are required");
  SliceParams params;
  bool read_at_run = from_inputs;
  if (from_inputs) {
    // Constant inputs (absent axes and steps are constant too) are read now.
    bool all_constant = true;
    std::vector<int64_t>* fields[] = {&params.starts, &params.ends, &params.axes, &params.steps};
    for (size_t i = 1; i <= 4; ++i) {
      if (i >= 3 && !node.has_input(i)) continue;
      const Tensor* t = node.constant_input(i);
      auto values = t ? t->ToInt64Vector() : Expected<std::vector<int64_t>>(Diag::Msg("not constant"));
      if (!values) {
        all_constant = false;
        break;
      }
      *fields[i - 1] = std::move(*values);
    }
    read_at_run = !all_constant;
  } else {
    params.starts = node.GetInts("starts");
    params.ends = node.GetInts("ends");
    params.axes = node.GetInts("axes");
  }
  Status defaulted = read_at_run ? Status::OK() : params.Default();
  return MakeKernel<SliceKernel>(read_at_run, std::move(params), std::move(defaulted));
}

Expected<std::unique_ptr<OpKernel>> CreatePad(const NodeInfo& node) {
  NUPHAR_RETURN_IF_ERROR(CheckMovableInput(node, 0));
  if (node.opset() < 2) return node.Error("Pad-1 ('paddings' attribute) is not supported; use opset >= 2");
  const std::string mode = node.GetString("mode", "constant");
  PadMode m;
  if (mode == "constant") m = PadMode::kConstant;
  else if (mode == "reflect") m = PadMode::kReflect;
  else if (mode == "edge") m = PadMode::kEdge;
  else if (mode == "wrap" && node.opset() >= 19) m = PadMode::kWrap;
  else return node.Error("mode '" + mode + "' is not constant, reflect, edge or (from opset 19) wrap");
  if (node.has_input(3) && node.opset() < 18) return node.Error("the 'axes' input exists from Pad-18");
  const bool from_inputs = node.opset() >= 11;
  if (from_inputs && !node.has_input(1)) return node.Error("input 'pads' is missing");
  if (!from_inputs && !node.has_attr("pads")) return node.Error("attribute 'pads' is missing");
  return MakeKernel<PadKernel>(m, from_inputs, node.GetInts("pads"), node.GetFloat("value", 0.0f));
}

}  // namespace

void RegisterSlicePadKernels(KernelRegistry& r) {
  r.Add("", "Slice", CreateSlice);
  r.Add("", "Pad", CreatePad);
  r.Add("", "CenterCropPad", CreateCenterCropPad);
}

}  // namespace nuphar::tensor_kernels
