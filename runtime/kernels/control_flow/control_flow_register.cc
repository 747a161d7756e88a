// Registration of the control flow kernel family: Scan, Loop, If (control_flow_kernels.h).
#include "runtime/kernels/control_flow/control_flow_kernels.h"

namespace nuphar {

void RegisterControlFlowKernels(KernelRegistry& r) {
  r.Add("", "Scan", CreateScan);
  r.Add("", "Loop", CreateLoop);
  r.Add("", "If", CreateIf);
}

}  // namespace nuphar
