// Packing of the fused int8 LSTM step's weights (runtime/kernels/quant/dq_lstm_cell.h).
#include "runtime/kernels/quant/dq_lstm_cell.h"

#include <cstring>

namespace nuphar::quant {

size_t LstmCellPackedBytes(int64_t K, int64_t H, int chunk_units) {
  const int64_t groups = (K + 3) / 4;
  return static_cast<size_t>(H / chunk_units) * static_cast<size_t>(groups) * 4 * static_cast<size_t>(chunk_units) * 4;
}

void PackLstmCellWeights(const int8_t* wq, int64_t K, int64_t H, int chunk_units, const int gate_parts[4],
                         uint8_t* packed) {
  const int64_t groups = (K + 3) / 4, n = 4 * H;
  std::memset(packed, 0, LstmCellPackedBytes(K, H, chunk_units));
  uint8_t* out = packed;
  for (int64_t u = 0; u < H / chunk_units; ++u)
    for (int64_t g = 0; g < groups; ++g)
      for (int r = 0; r < 4; ++r)
        for (int64_t j = 0; j < chunk_units; ++j, out += 4) {
          const int64_t col = gate_parts[r] * H + u * chunk_units + j;
          for (int64_t b = 0; b < 4 && 4 * g + b < K; ++b) out[b] = static_cast<uint8_t>(wq[(4 * g + b) * n + col]);
        }
}

}  // namespace nuphar::quant
