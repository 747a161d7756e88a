// The three cells of the RNN driver (hooks documented in rnn_driver.h) and their factories.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "runtime/kernels/rnn/rnn_driver.h"

namespace nuphar {

struct LstmCell {
  static constexpr int kGates = 4;
  static constexpr bool kHasCellState = true;
  static std::vector<std::string> DefaultActivations();
  bool input_forget = false;
  int64_t ScratchElems(int64_t, int64_t) const { return 0; }
  template <class T> void FoldBias(const T* Wb, const T* Rb, int64_t H, T* out) const;
  template <class T> void Step(const RnnDirectionWeights<T>& w, const RnnStepBuffers<T>& s) const;
};

struct GruCell {
  static constexpr int kGates = 3;
  static constexpr bool kHasCellState = false;
  static std::vector<std::string> DefaultActivations();
  bool linear_before_reset = false;
  int64_t ScratchElems(int64_t batch, int64_t H) const;
  template <class T> void FoldBias(const T* Wb, const T* Rb, int64_t H, T* out) const;
  template <class T> void Step(const RnnDirectionWeights<T>& w, const RnnStepBuffers<T>& s) const;
};

struct SimpleRnnCell {
  static constexpr int kGates = 1;
  static constexpr bool kHasCellState = false;
  static std::vector<std::string> DefaultActivations();
  int64_t ScratchElems(int64_t, int64_t) const { return 0; }
  template <class T> void FoldBias(const T* Wb, const T* Rb, int64_t H, T* out) const;
  template <class T> void Step(const RnnDirectionWeights<T>& w, const RnnStepBuffers<T>& s) const;
};

Expected<std::unique_ptr<OpKernel>> CreateLstm(const NodeInfo& node);
Expected<std::unique_ptr<OpKernel>> CreateGru(const NodeInfo& node);
Expected<std::unique_ptr<OpKernel>> CreateSimpleRnn(const NodeInfo& node);

}  // namespace nuphar
