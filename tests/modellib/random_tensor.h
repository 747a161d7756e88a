// Random float tensors for runtime tests: uniform in [-2, 2), reproducible from a seed.
#pragma once

#include <cstdint>
#include <random>
#include <utility>
#include <vector>

#include "runtime/core/tensor.h"

namespace nuphar::testing {

inline Tensor RandomTensor(std::vector<int64_t> shape, uint32_t seed) {
  std::mt19937 gen(seed);
  std::uniform_real_distribution<float> dist(-2.0f, 2.0f);
  Tensor t(DType::kFloat, std::move(shape));
  for (int64_t i = 0; i < t.size(); ++i) t.data<float>()[i] = dist(gen);
  return t;
}

}  // namespace nuphar::testing
