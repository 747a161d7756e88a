// Runs one feed on two sessions and expects the same outputs byte for byte: the runtime tests'
// check that an optimized path (fusion, generated code) equals the reference executor.
#pragma once

#include <gtest/gtest.h>

#include <cstring>

#include "runtime/session.h"

namespace nuphar::testing {

inline void ExpectSameOutputs(const Session& reference, const Session& tested, const NamedTensors& feeds) {
  auto a = reference.Run(feeds);
  auto b = tested.Run(feeds);
  ASSERT_TRUE(a.ok()) << a.message();
  ASSERT_TRUE(b.ok()) << b.message();
  ASSERT_EQ(a->size(), b->size());
  for (size_t o = 0; o < a->size(); ++o) {
    ASSERT_EQ((*a)[o].shape(), (*b)[o].shape());
    EXPECT_EQ(std::memcmp((*a)[o].raw(), (*b)[o].raw(), (*a)[o].bytes()), 0) << "output " << o << " differs";
  }
}

}  // namespace nuphar::testing
