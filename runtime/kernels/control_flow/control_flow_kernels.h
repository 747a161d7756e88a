// Factories of the control-flow kernel family (registered in control_flow_register.cc).
#pragma once

#include <memory>

#include "runtime/kernels/kernel.h"

namespace nuphar {

Expected<std::unique_ptr<OpKernel>> CreateScan(const NodeInfo& node);
/// Scan with its body already compiled (the JIT's Scan kernel keeps the reference one as its
/// fallback and shares the body plan with it).
Expected<std::unique_ptr<OpKernel>> CreateScanWithBody(const NodeInfo& node, std::shared_ptr<const GraphPlan> body);
Expected<std::unique_ptr<OpKernel>> CreateLoop(const NodeInfo& node);
Expected<std::unique_ptr<OpKernel>> CreateIf(const NodeInfo& node);

}  // namespace nuphar
