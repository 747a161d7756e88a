// MT19937 and random_sample() exactly as numpy's legacy RandomState (graph/numpy_random.h).
#include "graph/numpy_random.h"

namespace nuphar {

NumpyRandomState::NumpyRandomState(uint32_t seed) {
  mt_[0] = seed;
  for (int i = 1; i < 624; ++i) mt_[i] = 1812433253u * (mt_[i - 1] ^ (mt_[i - 1] >> 30)) + static_cast<uint32_t>(i);
}

uint32_t NumpyRandomState::Next() {
  if (index_ >= 624) {
    for (int k = 0; k < 624; ++k) {
      const uint32_t y = (mt_[k] & 0x80000000u) | (mt_[(k + 1) % 624] & 0x7fffffffu);
      mt_[k] = mt_[(k + 397) % 624] ^ (y >> 1) ^ ((y & 1u) ? 0x9908b0dfu : 0u);
    }
    index_ = 0;
  }
  uint32_t y = mt_[index_++];
  y ^= y >> 11;
  y ^= (y << 7) & 0x9d2c5680u;
  y ^= (y << 15) & 0xefc60000u;
  y ^= y >> 18;
  return y;
}

double NumpyRandomState::RandomSample() {
  const uint32_t a = Next() >> 5, b = Next() >> 6;
  return (a * 67108864.0 + b) / 9007199254740992.0;
}

}  // namespace nuphar
