// Normalizations: BatchNormalization (inference at every opset; training_mode=1 of opset 14+
// computes batch statistics), GroupNormalization (opset 18, 21) and InstanceNormalization (its
// one-channel-per-group case), LayerNormalization (opset 17), LRN and MeanVarianceNormalization.
#include <algorithm>
#include <cmath>
#include <string>

#include "runtime/kernels/nn/nn_dtype.h"
#include "runtime/kernels/nn/nn_kernels.h"

namespace nuphar {
namespace {

// X [N, C, spatial...]: the channel count and the size of one (n, c) plane.
Status PlaneSizes(const Tensor& x, int64_t* channels, int64_t* plane) {
  if (x.rank() < 2) return Diag::Msg("X must have rank >= 2, got " + ShapeToString(x.shape()));
  *channels = x.dim(1);
  *plane = 1;
  for (int64_t i = 2; i < x.rank(); ++i) *plane *= x.dim(i);
  return Status::OK();
}

class BatchNormKernel final : public OpKernel {
 public:
  BatchNormKernel(float epsilon, float momentum, bool training) : epsilon_(epsilon), momentum_(momentum), training_(training) {}

  Status Compute(KernelContext& ctx) const override {
    const Tensor* x = ctx.input(0);
    const Tensor* params[4] = {ctx.input(1), ctx.input(2), ctx.input(3), ctx.input(4)};  // scale, B, mean, var
    if (!x || !params[0] || !params[1] || !params[2] || !params[3])
      return Diag::Msg("BatchNormalization needs X, scale, B, mean and var");
    int64_t C = 0, plane = 0;
    NUPHAR_RETURN_IF_ERROR(PlaneSizes(*x, &C, &plane));
    const int64_t N = x->dim(0);
    // Parameters are per channel ([C]) or, with spatial=0 before opset 9, per activation ([C, D...]).
    const int64_t param_size = params[0]->size();
    for (const Tensor* p : params) {
      if (p->size() != param_size || (param_size != C && param_size != C * plane))
        return Diag::Msg("BatchNormalization parameter shape " + ShapeToString(p->shape()) + " does not fit X " +
                         ShapeToString(x->shape()));
      if (p->dtype() != params[0]->dtype()) return Diag::Msg("BatchNormalization parameters differ in element type");
    }
    if (training_ && param_size != C) return Diag::Msg("BatchNormalization training needs per-channel parameters");
    if (params[0]->dtype() != x->dtype() || params[2]->dtype() != x->dtype())
      return Diag::Msg("BatchNormalization with mixed element types is not supported");
    Tensor* y = ctx.Output(0, x->dtype(), x->shape());
    const int64_t inner = param_size == C ? plane : 1;  // elements sharing one parameter value
    return DispatchFloating(x->dtype(), [&]<class T>() {
      const T* px = x->data<T>();
      const T* scale = params[0]->data<T>();
      const T* bias = params[1]->data<T>();
      const T* mean = params[2]->data<T>();
      const T* var = params[3]->data<T>();
      T* py = y->data<T>();
      if (training_) {
        T* run_mean = ctx.Output(1, x->dtype(), params[2]->shape())->data<T>();
        T* run_var = ctx.Output(2, x->dtype(), params[3]->shape())->data<T>();
        for (int64_t c = 0; c < C; ++c) {
          double sum = 0, sq = 0;
          for (int64_t n = 0; n < N; ++n) {
            const T* xp = px + (n * C + c) * plane;
            for (int64_t i = 0; i < plane; ++i) sum += static_cast<double>(xp[i]);
          }
          const double count = static_cast<double>(N * plane);
          const double m = count > 0 ? sum / count : 0;
          for (int64_t n = 0; n < N; ++n) {
            const T* xp = px + (n * C + c) * plane;
            for (int64_t i = 0; i < plane; ++i) sq += (static_cast<double>(xp[i]) - m) * (static_cast<double>(xp[i]) - m);
          }
          const double v = count > 0 ? sq / count : 0;
          const double inv = 1.0 / std::sqrt(v + static_cast<double>(epsilon_));
          for (int64_t n = 0; n < N; ++n) {
            const T* xp = px + (n * C + c) * plane;
            T* yp = py + (n * C + c) * plane;
            for (int64_t i = 0; i < plane; ++i)
              yp[i] = static_cast<T>((static_cast<double>(xp[i]) - m) * inv * static_cast<double>(scale[c]) +
                                     static_cast<double>(bias[c]));
          }
          run_mean[c] = static_cast<T>(static_cast<double>(mean[c]) * momentum_ + m * (1.0 - momentum_));
          run_var[c] = static_cast<T>(static_cast<double>(var[c]) * momentum_ + v * (1.0 - momentum_));
        }
        return Status::OK();
      }
      for (int64_t n = 0; n < N; ++n) {
        for (int64_t j = 0; j < C * plane / inner; ++j) {
          const T a = static_cast<T>(scale[j] / std::sqrt(var[j] + static_cast<T>(epsilon_)));
          const T b = bias[j] - mean[j] * a;
          const T* xp = px + n * C * plane + j * inner;
          T* yp = py + n * C * plane + j * inner;
          for (int64_t i = 0; i < inner; ++i) yp[i] = xp[i] * a + b;
        }
      }
      return Status::OK();
    });
  }

 private:
  float epsilon_, momentum_;
  bool training_;
};

Expected<std::unique_ptr<OpKernel>> CreateBatchNorm(const NodeInfo& node) {
  for (size_t i = 0; i < 5; ++i)
    if (!DeclaredTypeIsOneOf(node.input_type(i), DType::kFloat, DType::kDouble))
      return node.Error(std::string("BatchNormalization on ") + DTypeName(node.input_type(i)) + " is not supported");
  bool training = false;
  if (node.opset() < 7 && node.GetInt("is_test", 0) == 0) training = true;
  if (node.opset() >= 14) training = node.GetInt("training_mode", 0) != 0;
  // Before opset 14 training is implied by is_test=0 (< 7) or by requesting the statistics outputs.
  if (node.opset() < 14) {
    if (training) return node.Error("BatchNormalization in training mode (is_test=0) is not supported");
    for (size_t i = 1; i < node.num_outputs(); ++i)
      if (node.has_output(i)) return node.Error("BatchNormalization training outputs (mean/var/saved_*) are not supported");
  } else if (!training) {
    for (size_t i = 1; i < node.num_outputs(); ++i)
      if (node.has_output(i)) return node.Error("BatchNormalization outputs running_mean/var need training_mode=1");
  }
  return MakeKernel<BatchNormKernel>(node.GetFloat("epsilon", 1e-5f), node.GetFloat("momentum", 0.9f), training);
}

// GroupNormalization: X [N, C, spatial...] in num_groups groups of C / num_groups channels,
// each normalized over its channels and positions. Scale and B are per group at opset 18 and
// per channel from opset 21 (the 18 signature was ambiguous and ONNX replaced it); statistics
// in double, which covers stash_type=1 (float) within tolerance. InstanceNormalization is the
// case of one channel per group: y = scale[c] * (x - mean) / sqrt(var + eps) + B[c] per plane.
class GroupNormKernel final : public OpKernel {
 public:
  static constexpr int64_t kOneChannelPerGroup = 0;  ///< groups = C, known at run time
  GroupNormKernel(float epsilon, int64_t groups, bool per_channel) : epsilon_(epsilon), groups_(groups), per_channel_(per_channel) {}
  Status Compute(KernelContext& ctx) const override {
    const Tensor* x = ctx.input(0);
    const Tensor* scale = ctx.input(1);
    const Tensor* bias = ctx.input(2);
    if (!x || !scale || !bias) return Diag::Msg("normalization needs X, scale and bias");
    int64_t C = 0, plane = 0;
    NUPHAR_RETURN_IF_ERROR(PlaneSizes(*x, &C, &plane));
    const int64_t groups = groups_ == kOneChannelPerGroup ? C : groups_;
    if (groups == 0) {  // C = 0: an empty output
      ctx.Output(0, x->dtype(), x->shape());
      return Status::OK();
    }
    if (C % groups != 0)
      return Diag::Msg("C = " + std::to_string(C) + " is not a multiple of num_groups = " + std::to_string(groups));
    const int64_t want = per_channel_ ? C : groups;
    if (scale->size() != want || bias->size() != want || scale->dtype() != x->dtype() || bias->dtype() != x->dtype())
      return Diag::Msg(std::string("scale and bias must be [") + (per_channel_ ? "C" : "num_groups") + "] = [" +
                       std::to_string(want) + "] of X's element type");
    const int64_t per_group = C / groups;
    const int64_t group_size = per_group * plane;
    Tensor* y = ctx.Output(0, x->dtype(), x->shape());
    return DispatchFloating(x->dtype(), [&]<class T>() {
      for (int64_t g = 0; g < x->dim(0) * groups; ++g) {
        const T* xg = x->data<T>() + g * group_size;
        T* yg = y->data<T>() + g * group_size;
        double sum = 0, sq = 0;
        for (int64_t i = 0; i < group_size; ++i) sum += static_cast<double>(xg[i]);
        const double mean = sum / static_cast<double>(group_size);
        for (int64_t i = 0; i < group_size; ++i) sq += (static_cast<double>(xg[i]) - mean) * (static_cast<double>(xg[i]) - mean);
        const double inv = 1.0 / std::sqrt(sq / static_cast<double>(group_size) + static_cast<double>(epsilon_));
        for (int64_t c = 0; c < per_group; ++c) {
          const int64_t k = per_channel_ ? (g % groups) * per_group + c : g % groups;
          const double a = static_cast<double>(scale->data<T>()[k]) * inv;
          const double b = static_cast<double>(bias->data<T>()[k]);
          for (int64_t i = c * plane; i < (c + 1) * plane; ++i) yg[i] = static_cast<T>((static_cast<double>(xg[i]) - mean) * a + b);
        }
      }
      return Status::OK();
    });
  }

 private:
  float epsilon_;
  int64_t groups_;
  bool per_channel_;
};

Expected<std::unique_ptr<OpKernel>> CreateInstanceNorm(const NodeInfo& node) {
  if (!DeclaredTypeIsOneOf(node.input_type(0), DType::kFloat, DType::kDouble))
    return node.Error(std::string("InstanceNormalization on ") + DTypeName(node.input_type(0)) + " is not supported");
  return MakeKernel<GroupNormKernel>(node.GetFloat("epsilon", 1e-5f), GroupNormKernel::kOneChannelPerGroup, true);
}

Expected<std::unique_ptr<OpKernel>> CreateGroupNorm(const NodeInfo& node) {
  if (!DeclaredTypeIsOneOf(node.input_type(0), DType::kFloat, DType::kDouble))
    return node.Error(std::string("GroupNormalization on ") + DTypeName(node.input_type(0)) + " is not supported");
  const int64_t groups = node.GetInt("num_groups", 0);
  if (groups <= 0) return node.Error("attribute 'num_groups' must be positive");
  return MakeKernel<GroupNormKernel>(node.GetFloat("epsilon", 1e-5f), groups, node.opset() >= 21);
}

// LayerNormalization (opset 17): normalizes over X.shape[axis:], statistics in float (stash_type
// 1) or the input type; Scale and B broadcast onto the normalized shape.
class LayerNormKernel final : public OpKernel {
 public:
  LayerNormKernel(int64_t axis, float epsilon) : axis_(axis), epsilon_(epsilon) {}
  Status Compute(KernelContext& ctx) const override {
    const Tensor* x = ctx.input(0);
    const Tensor* scale = ctx.input(1);
    const Tensor* bias = ctx.input(2);
    if (!x || !scale) return Diag::Msg("LayerNormalization needs X and Scale");
    const int64_t axis = axis_ < 0 ? axis_ + x->rank() : axis_;
    if (axis < 0 || axis >= std::max<int64_t>(x->rank(), 1))
      return Diag::Msg("LayerNormalization axis " + std::to_string(axis_) + " is out of range for " + ShapeToString(x->shape()));
    int64_t outer = 1, inner = 1;
    for (int64_t i = 0; i < x->rank(); ++i) (i < axis ? outer : inner) *= x->dim(i);
    // Scale/B of a suffix shape of the normalized dims broadcast by index modulo their size.
    for (const Tensor* p : {scale, bias}) {
      if (!p) continue;
      if (p->dtype() != x->dtype()) return Diag::Msg("LayerNormalization Scale/B must have X's element type");
      if (p->size() == 0 || inner % p->size() != 0)
        return Diag::Msg("LayerNormalization Scale/B shape " + ShapeToString(p->shape()) + " does not broadcast");
    }
    Tensor* y = ctx.Output(0, x->dtype(), x->shape());
    std::vector<int64_t> stat_shape = x->shape();
    for (int64_t i = axis; i < x->rank(); ++i) stat_shape[static_cast<size_t>(i)] = 1;
    float* mean_out = ctx.output_needed(1) ? ctx.Output(1, DType::kFloat, stat_shape)->data<float>() : nullptr;
    float* inv_out = ctx.output_needed(2) ? ctx.Output(2, DType::kFloat, stat_shape)->data<float>() : nullptr;
    return DispatchFloating(x->dtype(), [&]<class T>() {
      const int64_t ns = scale->size(), nb = bias ? bias->size() : 1;
      for (int64_t o = 0; o < outer; ++o) {
        const T* xp = x->data<T>() + o * inner;
        T* yp = y->data<T>() + o * inner;
        double sum = 0, sq = 0;
        for (int64_t i = 0; i < inner; ++i) sum += static_cast<double>(xp[i]);
        const double mean = sum / static_cast<double>(inner);
        for (int64_t i = 0; i < inner; ++i) sq += (static_cast<double>(xp[i]) - mean) * (static_cast<double>(xp[i]) - mean);
        const double inv = 1.0 / std::sqrt(sq / static_cast<double>(inner) + static_cast<double>(epsilon_));
        for (int64_t i = 0; i < inner; ++i) {
          const double v = (static_cast<double>(xp[i]) - mean) * inv * static_cast<double>(scale->data<T>()[i % ns]);
          yp[i] = static_cast<T>(bias ? v + static_cast<double>(bias->data<T>()[i % nb]) : v);
        }
        if (mean_out) mean_out[o] = static_cast<float>(mean);
        if (inv_out) inv_out[o] = static_cast<float>(inv);
      }
      return Status::OK();
    });
  }

 private:
  int64_t axis_;
  float epsilon_;
};

Expected<std::unique_ptr<OpKernel>> CreateLayerNorm(const NodeInfo& node) {
  if (!DeclaredTypeIsOneOf(node.input_type(0), DType::kFloat, DType::kDouble))
    return node.Error(std::string("LayerNormalization on ") + DTypeName(node.input_type(0)) + " is not supported");
  if (node.GetInt("stash_type", 1) != 1) return node.Error("LayerNormalization stash_type other than 1 is not supported");
  return MakeKernel<LayerNormKernel>(node.GetInt("axis", -1), node.GetFloat("epsilon", 1e-5f));
}

// LRN across channels: y = x / (bias + alpha / size * sum(x^2 over the channel window))^beta.
class LrnKernel final : public OpKernel {
 public:
  LrnKernel(float alpha, float beta, float bias, int64_t size) : alpha_(alpha), beta_(beta), bias_(bias), size_(size) {}
  Status Compute(KernelContext& ctx) const override {
    const Tensor* x = ctx.input(0);
    if (!x) return Diag::Msg("LRN needs input X");
    int64_t C = 0, plane = 0;
    NUPHAR_RETURN_IF_ERROR(PlaneSizes(*x, &C, &plane));
    Tensor* y = ctx.Output(0, x->dtype(), x->shape());
    const int64_t before = (size_ - 1) / 2, after = size_ - 1 - before;  // floor and ceil of (size-1)/2
    return DispatchFloating(x->dtype(), [&]<class T>() {
      for (int64_t n = 0; n < x->dim(0); ++n) {
        const T* xn = x->data<T>() + n * C * plane;
        T* yn = y->data<T>() + n * C * plane;
        for (int64_t c = 0; c < C; ++c) {
          const int64_t lo = std::max<int64_t>(0, c - before), hi = std::min<int64_t>(C - 1, c + after);
          for (int64_t i = 0; i < plane; ++i) {
            double sq = 0;
            for (int64_t k = lo; k <= hi; ++k) sq += static_cast<double>(xn[k * plane + i]) * static_cast<double>(xn[k * plane + i]);
            const double denom = std::pow(static_cast<double>(bias_) + static_cast<double>(alpha_) / static_cast<double>(size_) * sq,
                                          static_cast<double>(beta_));
            yn[c * plane + i] = static_cast<T>(static_cast<double>(xn[c * plane + i]) / denom);
          }
        }
      }
      return Status::OK();
    });
  }

 private:
  float alpha_, beta_, bias_;
  int64_t size_;
};

Expected<std::unique_ptr<OpKernel>> CreateLrn(const NodeInfo& node) {
  if (!DeclaredTypeIsOneOf(node.input_type(0), DType::kFloat, DType::kDouble))
    return node.Error(std::string("LRN on ") + DTypeName(node.input_type(0)) + " is not supported");
  const int64_t size = node.GetInt("size", 0);
  if (size < 1) return node.Error("LRN needs a positive size attribute");
  return MakeKernel<LrnKernel>(node.GetFloat("alpha", 1e-4f), node.GetFloat("beta", 0.75f), node.GetFloat("bias", 1.0f), size);
}

// MeanVarianceNormalization: (x - E[x]) / (sqrt(E[x^2] - E[x]^2) + 1e-9) over `axes`, as the
// ONNX function body computes it.
class MvnKernel final : public OpKernel {
 public:
  explicit MvnKernel(std::vector<int64_t> axes) : axes_(std::move(axes)) {}
  Status Compute(KernelContext& ctx) const override {
    const Tensor* x = ctx.input(0);
    if (!x) return Diag::Msg("MeanVarianceNormalization needs input X");
    const int64_t rank = x->rank();
    std::vector<bool> reduced(static_cast<size_t>(rank), false);
    for (int64_t a : axes_) {
      const int64_t axis = a < 0 ? a + rank : a;
      if (axis < 0 || axis >= rank)
        return Diag::Msg("MeanVarianceNormalization axis " + std::to_string(a) + " is out of range for " + ShapeToString(x->shape()));
      reduced[static_cast<size_t>(axis)] = true;
    }
    // Each element's group is its index with the reduced coordinates dropped.
    std::vector<int64_t> group_stride(static_cast<size_t>(rank), 0);
    int64_t groups = 1;
    for (int64_t i = rank; i-- > 0;)
      if (!reduced[static_cast<size_t>(i)]) group_stride[static_cast<size_t>(i)] = groups, groups *= x->dim(i);
    std::vector<double> sum(static_cast<size_t>(groups), 0.0), sq(static_cast<size_t>(groups), 0.0);
    std::vector<int64_t> group_of(static_cast<size_t>(x->size()));
    std::vector<int64_t> idx(static_cast<size_t>(rank), 0);
    for (int64_t e = 0; e < x->size(); ++e) {
      int64_t grp = 0;
      for (int64_t i = 0; i < rank; ++i) grp += idx[static_cast<size_t>(i)] * group_stride[static_cast<size_t>(i)];
      group_of[static_cast<size_t>(e)] = grp;
      for (int64_t i = rank; i-- > 0;) {
        if (++idx[static_cast<size_t>(i)] < x->dim(i)) break;
        idx[static_cast<size_t>(i)] = 0;
      }
    }
    const double count = groups > 0 ? static_cast<double>(x->size()) / static_cast<double>(groups) : 1.0;
    Tensor* y = ctx.Output(0, x->dtype(), x->shape());
    return DispatchFloating(x->dtype(), [&]<class T>() {
      const T* px = x->data<T>();
      for (int64_t e = 0; e < x->size(); ++e) {
        const double v = static_cast<double>(px[e]);
        sum[static_cast<size_t>(group_of[static_cast<size_t>(e)])] += v;
        sq[static_cast<size_t>(group_of[static_cast<size_t>(e)])] += v * v;
      }
      for (int64_t e = 0; e < x->size(); ++e) {
        const size_t grp = static_cast<size_t>(group_of[static_cast<size_t>(e)]);
        const double mean = sum[grp] / count;
        const double stddev = std::sqrt(std::max(0.0, sq[grp] / count - mean * mean));
        y->data<T>()[e] = static_cast<T>((static_cast<double>(px[e]) - mean) / (stddev + 1e-9));
      }
      return Status::OK();
    });
  }

 private:
  std::vector<int64_t> axes_;
};

Expected<std::unique_ptr<OpKernel>> CreateMvn(const NodeInfo& node) {
  if (!DeclaredTypeIsOneOf(node.input_type(0), DType::kFloat, DType::kDouble))
    return node.Error(std::string("MeanVarianceNormalization on ") + DTypeName(node.input_type(0)) + " is not supported");
  std::vector<int64_t> axes = node.has_attr("axes") ? node.GetInts("axes") : std::vector<int64_t>{0, 2, 3};
  return MakeKernel<MvnKernel>(std::move(axes));
}

}  // namespace

void RegisterNormKernels(KernelRegistry& r) {
  r.Add("", "BatchNormalization", CreateBatchNorm);
  r.Add("", "InstanceNormalization", CreateInstanceNorm);
  r.Add("", "GroupNormalization", CreateGroupNorm);
  r.Add("", "LayerNormalization", CreateLayerNorm);
  r.Add("", "LRN", CreateLrn);
  r.Add("", "MeanVarianceNormalization", CreateMvn);
}

}  // namespace nuphar
