// Per-thread scratch memory for kernels that need a temporary (im2col columns, int32
// accumulators). Kernels are shared by concurrent Runs, so the scratch cannot live in the
// kernel; a thread_local buffer that only grows keeps steady-state execution allocation-free.
#pragma once

#include <cstddef>
#include <memory>
#include <new>

namespace nuphar {

/// `count` elements of T from scratch slot `slot` (0..3) of the calling thread. The memory stays
/// valid until the same thread asks for the same slot again. Contents are unspecified.
template <class T>
T* ScratchBuffer(size_t count, int slot) {
  struct Slot {
    std::unique_ptr<std::byte[]> data;
    size_t bytes = 0;
  };
  thread_local Slot slots[4];
  Slot& s = slots[slot];
  const size_t need = count * sizeof(T) + 64;
  if (s.bytes < need) {
    s.data.reset(new std::byte[need]);
    s.bytes = need;
  }
  // 64-byte alignment for vector loads.
  void* p = s.data.get();
  size_t space = s.bytes;
  return static_cast<T*>(std::align(64, count * sizeof(T), p, space));
}

}  // namespace nuphar
