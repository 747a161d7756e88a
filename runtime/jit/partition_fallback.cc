// Compare mode and fallback of a generated partition kernel (partition_fallback.h).
#include "runtime/jit/partition_fallback.h"

#include <onnx/onnx_pb.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstring>

#include "graph/diagnostics.h"

namespace nuphar::jit {
namespace {

// R1: float outputs within 1e-5 relative (|jit - ref| <= 1e-5 * max(|ref|, 1)).
constexpr double kCompareRelTolerance = 1e-5;

}  // namespace

Expected<std::unique_ptr<PartitionFallback>> PartitionFallback::Create(const NodeInfo& node) {
  const onnx::GraphProto* body = node.GetGraph("body");
  if (!body) return node.Error("partition without a body");
  NUPHAR_ASSIGN_OR_RETURN(PartitionReference reference, PartitionReference::Create(node));
  auto f = std::unique_ptr<PartitionFallback>(new PartitionFallback(std::move(reference)));
  for (const auto& n : body->node()) f->nodes_ += (f->nodes_.empty() ? "" : ", ") + n.name() + " (" + n.op_type() + ")";
  f->compare_ = node.setting_is("nuphar_execution_mode", "compare");
  return f;
}

PartitionFallback::~PartitionFallback() {
  if (!compare_ || compared_runs_ == 0) return;
  char diffs[96];
  if (compared_floats_) std::snprintf(diffs, sizeof(diffs), "max abs diff %.3g, max rel diff %.3g", max_abs_, max_rel_);
  else std::snprintf(diffs, sizeof(diffs), "identical");  // integer and bool outputs only: checked byte for byte
  ReportDiagnostic(Severity::kNote, "nuphar compare: " + kernel_name_ + " [" + nodes_ + "]: " +
                                        std::to_string(compared_runs_) + " run(s), " + diffs);
}

Expected<std::vector<Tensor>> PartitionFallback::ReferenceOutputs(KernelContext& ctx) const { return reference_.Outputs(ctx); }

Status PartitionFallback::Run(KernelContext& ctx) const { return reference_.Run(ctx); }

Status PartitionFallback::Compare(KernelContext& ctx) const {
  NUPHAR_ASSIGN_OR_RETURN(auto ref, ReferenceOutputs(ctx));
  double worst_abs = 0, worst_rel = 0;
  bool floats = false;
  for (size_t o = 0; o < ref.size(); ++o) {
    const Tensor& jit_out = *ctx.Output(o, ref[o].dtype(), ref[o].shape());  // same buffer, already written
    if (ref[o].dtype() != DType::kFloat) {  // integers and bools: identical or wrong
      if (jit_out.bytes() != ref[o].bytes() || std::memcmp(jit_out.raw(), ref[o].raw(), ref[o].bytes()) != 0)
        return Diag::Msg("compare: generated kernel " + kernel_name_ + " output " + std::to_string(o) + " (" +
                         DTypeName(ref[o].dtype()) + ") differs from the reference on nodes " + nodes_);
      continue;
    }
    floats = true;
    const float* a = jit_out.data<float>();
    const float* b = ref[o].data<float>();
    for (int64_t i = 0; i < ref[o].size(); ++i) {
      if (std::isnan(a[i]) && std::isnan(b[i])) continue;
      const double d = std::fabs(static_cast<double>(a[i]) - b[i]);
      worst_abs = std::max(worst_abs, d);
      // Relative to the reference value, and absolute below 1 (values near 0 have no
      // meaningful relative error).
      worst_rel = std::max(worst_rel, d / std::max(std::fabs(static_cast<double>(b[i])), 1.0));
    }
  }
  {
    std::lock_guard<std::mutex> lock(mutex_);
    ++compared_runs_;
    compared_floats_ |= floats;
    max_abs_ = std::max(max_abs_, worst_abs);
    max_rel_ = std::max(max_rel_, worst_rel);
  }
  if (worst_rel > kCompareRelTolerance)
    return Diag::Msg("compare: generated kernel " + kernel_name_ + " differs from the reference by " +
                     std::to_string(worst_rel) + " (relative; tolerance 1e-5) on nodes " + nodes_);
  return Status::OK();
}

}  // namespace nuphar::jit
