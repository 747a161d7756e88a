// Unary ops with attributes: HardSigmoid HardSwish LeakyRelu Elu Selu Celu ThresholdedRelu
// Shrink, Gelu-20 (exact or tanh approximation), and Clip (bounds as attributes before opset 11,
// as optional scalar inputs from 11).
#include <algorithm>
#include <cmath>
#include <limits>
#include <string>

#include "runtime/kernels/elementwise/elementwise_common.h"

namespace nuphar::ew {
namespace {

// Attributes are float; each op converts them to the compute type once per element, which the
// compiler hoists out of the loop.
struct HardSigmoidOp {
  float alpha, beta;
  template <class C>
  C operator()(C x) const { return std::max(C(0), std::min(C(1), C(alpha) * x + C(beta))); }
};
struct HardSwishOp {
  template <class C>
  C operator()(C x) const { return x * std::max(C(0), std::min(C(1), x * C(1.0f / 6.0f) + C(0.5f))); }
};
struct LeakyReluOp {
  float alpha;
  template <class C>
  C operator()(C x) const { return x < 0 ? C(alpha) * x : x; }
};
struct EluOp {
  float alpha;
  template <class C>
  C operator()(C x) const { return x < 0 ? C(alpha) * (std::exp(x) - C(1)) : x; }
};
struct SeluOp {
  float alpha, gamma;
  template <class C>
  C operator()(C x) const { return x <= 0 ? C(gamma) * (C(alpha) * std::exp(x) - C(alpha)) : C(gamma) * x; }
};
struct CeluOp {
  float alpha;
  template <class C>
  C operator()(C x) const { return std::max(C(0), x) + std::min(C(0), C(alpha) * (std::exp(x / C(alpha)) - C(1))); }
};
struct ThresholdedReluOp {
  float alpha;
  template <class C>
  C operator()(C x) const { return x > C(alpha) ? x : C(0); }
};
struct ShrinkOp {
  float bias, lambd;
  template <class C>
  C operator()(C x) const {
    // Compare in double so integer inputs meet fractional thresholds exactly.
    const double v = static_cast<double>(x);
    if (v < -lambd) return static_cast<C>(v + bias);
    if (v > lambd) return static_cast<C>(v - bias);
    return C(0);
  }
};

struct GeluOp {
  bool tanh_approx;
  template <class C>
  C operator()(C x) const {
    if (tanh_approx) {
      const C k = C(0.7978845608028654);  // sqrt(2 / pi)
      return C(0.5) * x * (C(1) + std::tanh(k * (x + C(0.044715) * x * x * x)));
    }
    return C(0.5) * x * (C(1) + std::erf(x * C(0.7071067811865476)));
  }
};

Expected<std::unique_ptr<OpKernel>> CreateHardSigmoid(const NodeInfo& node) {
  return MakeUnary<kFloatTypes>(node, HardSigmoidOp{node.GetFloat("alpha", 0.2f), node.GetFloat("beta", 0.5f)});
}
Expected<std::unique_ptr<OpKernel>> CreateHardSwish(const NodeInfo& node) {
  return MakeUnary<kFloatTypes>(node, HardSwishOp{});
}
Expected<std::unique_ptr<OpKernel>> CreateLeakyRelu(const NodeInfo& node) {
  return MakeUnary<kFloatTypes>(node, LeakyReluOp{node.GetFloat("alpha", 0.01f)});
}
Expected<std::unique_ptr<OpKernel>> CreateElu(const NodeInfo& node) {
  return MakeUnary<kFloatTypes>(node, EluOp{node.GetFloat("alpha", 1.0f)});
}
Expected<std::unique_ptr<OpKernel>> CreateSelu(const NodeInfo& node) {
  return MakeUnary<kFloatTypes>(node, SeluOp{node.GetFloat("alpha", 1.67326319217681884765625f),
                                             node.GetFloat("gamma", 1.05070102214813232421875f)});
}
Expected<std::unique_ptr<OpKernel>> CreateCelu(const NodeInfo& node) {
  const float alpha = node.GetFloat("alpha", 1.0f);
  if (alpha == 0) return node.Error("alpha must not be 0");
  return MakeUnary<kFloatTypes>(node, CeluOp{alpha});
}
Expected<std::unique_ptr<OpKernel>> CreateThresholdedRelu(const NodeInfo& node) {
  return MakeUnary<kFloatTypes>(node, ThresholdedReluOp{node.GetFloat("alpha", 1.0f)});
}
Expected<std::unique_ptr<OpKernel>> CreateShrink(const NodeInfo& node) {
  return MakeUnary<kNumericTypes>(node, ShrinkOp{node.GetFloat("bias", 0.0f), node.GetFloat("lambd", 0.5f)});
}

// Clip: y = min(max(x, lo), hi), so lo > hi gives hi (as numpy.clip) and NaN passes through.
class ClipKernel final : public OpKernel {
 public:
  ClipKernel(bool bounds_are_inputs, float attr_min, float attr_max)
      : bounds_are_inputs_(bounds_are_inputs), attr_min_(attr_min), attr_max_(attr_max) {}

  Status Compute(KernelContext& ctx) const override {
    const Tensor* x = ctx.input(0);
    if (!x) return Diag::Msg("input 0 is missing");
    return VisitDType<kNumericTypes>(x->dtype(), [&](auto tag) -> Status {
      using T = decltype(tag);
      using C = ComputeT<T>;
      C lo = std::numeric_limits<C>::lowest(), hi = std::numeric_limits<C>::max();
      if (bounds_are_inputs_) {
        NUPHAR_RETURN_IF_ERROR(ReadBound<T>(ctx.input(1), x->dtype(), "min", lo));
        NUPHAR_RETURN_IF_ERROR(ReadBound<T>(ctx.input(2), x->dtype(), "max", hi));
      } else {
        if constexpr (std::is_floating_point_v<C>) {
          lo = static_cast<C>(attr_min_);
          hi = static_cast<C>(attr_max_);
        }
      }
      Tensor* y = ctx.Output(0, x->dtype(), x->shape());
      UnaryLoop(x->data<T>(), y->data<T>(), x->size(), [lo, hi](C v) { return std::min(std::max(v, lo), hi); });
      return Status::OK();
    });
  }

 private:
  template <class T>
  static Status ReadBound(const Tensor* t, DType dtype, const char* what, ComputeT<T>& out) {
    if (!t) return Status::OK();  // absent optional input: no bound
    if (t->dtype() != dtype) return Diag::Msg(std::string(what) + " has type " + DTypeName(t->dtype()) + ", not " + DTypeName(dtype));
    if (t->size() != 1) return Diag::Msg(std::string(what) + " must be a scalar, got shape " + ShapeToString(t->shape()));
    out = Load(t->data<T>()[0]);
    return Status::OK();
  }

  bool bounds_are_inputs_;
  float attr_min_, attr_max_;
};

Expected<std::unique_ptr<OpKernel>> CreateClip(const NodeInfo& node) {
  NUPHAR_RETURN_IF_ERROR(CheckDeclaredType(node, 0, node.opset() < 11 ? kFloatTypes : kNumericTypes));
  const bool inputs = node.opset() >= 11;
  return MakeKernel<ClipKernel>(inputs, node.GetFloat("min", std::numeric_limits<float>::lowest()),
                                node.GetFloat("max", std::numeric_limits<float>::max()));
}

Expected<std::unique_ptr<OpKernel>> CreateGelu(const NodeInfo& node) {
  const std::string approximate = node.GetString("approximate", "none");
  if (approximate != "none" && approximate != "tanh")
    return node.Error("Gelu approximate must be 'none' or 'tanh', not '" + approximate + "'");
  return MakeUnary<kFloatTypes>(node, GeluOp{approximate == "tanh"});
}

}  // namespace

void RegisterActivationKernels(KernelRegistry& r) {
  r.Add("", "HardSigmoid", CreateHardSigmoid);
  r.Add("", "HardSwish", CreateHardSwish);
  r.Add("", "LeakyRelu", CreateLeakyRelu);
  r.Add("", "Elu", CreateElu);
  r.Add("", "Selu", CreateSelu);
  r.Add("", "Celu", CreateCelu);
  r.Add("", "ThresholdedRelu", CreateThresholdedRelu);
  r.Add("", "Shrink", CreateShrink);
  r.Add("", "Clip", CreateClip);
  r.Add("", "Gelu", CreateGelu);
}

}  // namespace nuphar::ew
