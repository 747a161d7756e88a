// Packing of the fused int8 LSTM step's weights (runtime/kernels/quant/dq_lstm_cell.h).
#include "runtime/kernels/quant/dq_lstm_cell.h"

#include <cstring>

namespace nuphar::quant {

size_t LstmCellPackedBytes(int64_t K, int64_t H) {
  const int64_t groups = (K + 3) / 4;
  return static_cast<size_t>(H / kLstmChunkUnits) * static_cast<size_t>(groups) * 4 * kLstmChunkUnits * 4;
}

void PackLstmCellWeights(const int8_t* wq, int64_t K, int64_t H, const int gate_parts[4], uint8_t* packed) {
  const int64_t groups = (K + 3) / 4, n = 4 * H;
  std::memset(packed, 0, LstmCellPackedBytes(K, H));
  uint8_t* out = packed;
  for (int64_t u = 0; u < H / kLstmChunkUnits; ++u)
    for (int64_t g = 0; g < groups; ++g)
      for (int r = 0; r < 4; ++r)
        for (int64_t j = 0; j < kLstmChunkUnits; ++j, out += 4) {
          const int64_t col = gate_parts[r] * H + u * kLstmChunkUnits + j;
          for (int64_t b = 0; b < 4 && 4 * g + b < K; ++b) out[b] = static_cast<uint8_t>(wq[(4 * g + b) * n + col]);
        }
}

}  // namespace nuphar::quant
