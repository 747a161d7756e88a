// Which fused int8 LSTM step each ISA tier runs (runtime/kernels/quant/dq_lstm_cell.h).
#include "runtime/kernels/quant/dq_lstm_cell.h"

namespace nuphar::quant {

const LstmCellKernel* LstmCellKernelFor(IsaTier tier, bool a_within_7bit) {
  static constexpr LstmCellKernel kAvx512Vnni{32, &LstmCellStepAvx512Vnni};
  static constexpr LstmCellKernel kAvxVnni{16, &LstmCellStepAvxVnni};
  static constexpr LstmCellKernel kAvx2{16, &LstmCellStepAvx2};
  switch (tier) {
    case IsaTier::kAvx512Vnni: return &kAvx512Vnni;
    case IsaTier::kAvxVnni: return &kAvxVnni;
    case IsaTier::kAvx512:  // its zmm code has no VNNI: the ymm AVX2 step
    case IsaTier::kAvx2: return a_within_7bit ? &kAvx2 : nullptr;
    case IsaTier::kPortable: return nullptr;
  }
  return nullptr;
}

}  // namespace nuphar::quant
