// numpy.random.RandomState(seed) as far as rand()/uniform() go, bit for bit: the tools feed the
// same random inputs as ../shared/peer/ort_run.js and generate the same weights as
// ../shared/peer/make_rnn_model.py.
#pragma once

#include <cstdint>

namespace nuphar {

class NumpyRandomState {
 public:
  explicit NumpyRandomState(uint32_t seed);
  double RandomSample();  ///< == RandomState.random_sample()
  /// == RandomState.uniform(low, high): low + (high - low) * random_sample(), in double.
  double Uniform(double low, double high) { return low + (high - low) * RandomSample(); }

 private:
  uint32_t Next();
  uint32_t mt_[624];
  int index_ = 624;
};

}  // namespace nuphar
