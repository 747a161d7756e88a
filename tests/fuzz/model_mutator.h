// Structure-aware mutation of ONNX ModelProto bytes for libFuzzer (LLVMFuzzerCustomMutator).
// Byte-level mutation mostly produces protobufs that no longer parse, so the fuzzer would stall
// at the parser; this one parses the input, changes one thing a hostile or broken exporter
// could change (op types, attributes, dims, dtypes, initializer payload sizes, node inputs,
// whole nodes, subgraph bodies) and serializes again. Inputs that do not parse fall back to
// libFuzzer's byte mutation.
#pragma once

#include <cstddef>
#include <cstdint>

namespace nuphar::fuzz {

/// Mutates data[0, size) in place (at most max_size bytes) and returns the new size.
size_t MutateModel(uint8_t* data, size_t size, size_t max_size, unsigned int seed);

}  // namespace nuphar::fuzz

/// Every model target uses the structure-aware mutator: define this in exactly one file per
/// fuzz binary.
#define NUPHAR_FUZZ_USE_MODEL_MUTATOR                                                                       \
  extern "C" size_t LLVMFuzzerCustomMutator(uint8_t* data, size_t size, size_t max_size, unsigned int seed) { \
    return ::nuphar::fuzz::MutateModel(data, size, max_size, seed);                                         \
  }
