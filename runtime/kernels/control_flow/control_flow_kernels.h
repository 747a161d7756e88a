// Factories of the control-flow kernel family (registered in control_flow_register.cc).
#pragma once

#include <memory>

#include "runtime/kernels/kernel.h"

namespace nuphar {

Expected<std::unique_ptr<OpKernel>> CreateScan(const NodeInfo& node);
Expected<std::unique_ptr<OpKernel>> CreateLoop(const NodeInfo& node);
Expected<std::unique_ptr<OpKernel>> CreateIf(const NodeInfo& node);

}  // namespace nuphar
