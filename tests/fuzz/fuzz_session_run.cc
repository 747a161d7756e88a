// libFuzzer target: fuzzed input tensors (shapes, dtypes, values) fed to a fixed set of models
// (the quantizer fixtures: float and int8 Scan LSTMs, MatMul edge cases). Byte 0 picks the
// model, byte 1 the thread count; then per graph input one dtype byte, a rank byte, dims bytes
// and the payload. Run must return a value or an error, never crash.
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <memory>
#include <string>
#include <vector>

#include "runtime/session.h"

namespace {

const char* const kModels[] = {"lstm.onnx", "lstm_scan.onnx", "only_for_scan.onnx", "matmul_edges_q.onnx",
                               "symm16_all.onnx"};
constexpr int kModelCount = sizeof(kModels) / sizeof(kModels[0]);

struct Reader {
  const uint8_t* p;
  size_t left;
  uint8_t Byte() {
    if (left == 0) return 0;
    --left;
    return *p++;
  }
};

std::unique_ptr<nuphar::Session>& SessionFor(int model, int threads) {
  static std::unique_ptr<nuphar::Session> sessions[kModelCount][2];
  auto& s = sessions[model][threads - 1];
  if (!s) {
    nuphar::SessionOptions options;
    options.settings = "nuphar_num_threads:" + std::to_string(threads) + ", nuphar_parallel_min_workloads:1";
    auto created = nuphar::Session::Create(std::string(NUPHAR_SHARED_DIR) + "/fixtures/quantizer/" + kModels[model], options);
    if (created.ok()) s = std::move(*created);
  }
  return s;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  Reader r{data, size};
  const int model = r.Byte() % kModelCount;
  const int threads = 1 + r.Byte() % 2;
  auto& session = SessionFor(model, threads);
  if (!session) return 0;
  nuphar::NamedTensors inputs;
  for (const auto& in : session->inputs()) {
    const uint8_t type_byte = r.Byte();
    // Mostly the declared type; sometimes another one, to exercise the type checks.
    nuphar::DType dtype = type_byte < 200 ? in.dtype : static_cast<nuphar::DType>(type_byte % 17);
    if (dtype == nuphar::DType::kUndefined || !nuphar::IsNumeric(dtype)) dtype = nuphar::DType::kFloat;
    const int rank = type_byte < 230 && in.has_shape ? static_cast<int>(in.dims.size()) : r.Byte() % 5;
    std::vector<int64_t> shape;
    int64_t elements = 1;
    for (int d = 0; d < rank; ++d) {
      int64_t dim = r.Byte() % 9;  // 0..8: small, but empty tensors included
      if (in.has_shape && d < static_cast<int>(in.dims.size()) && in.dims[d] >= 0 && r.Byte() < 220) dim = in.dims[d];
      shape.push_back(dim);
      elements *= dim;
    }
    if (elements > (1 << 16)) return 0;
    nuphar::Tensor t(dtype, shape);
    const size_t bytes = t.bytes();
    const size_t take = bytes < r.left ? bytes : r.left;
    std::memset(t.raw(), 0, bytes);
    std::memcpy(t.raw(), r.p, take);
    r.p += take;
    r.left -= take;
    inputs.emplace_back(in.name, std::move(t));
  }
  auto out = session->Run(inputs);
  (void)out.ok();
  return 0;
}
