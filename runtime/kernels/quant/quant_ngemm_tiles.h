// The session's NGEMM settings (blocking, and the ISA tier of nuphar_codegen_target), read once at load time by every kernel that runs on
// NGEMM (MatMulInteger, MatMulInteger16, the fused DynQuantMatMul).
#pragma once

#include "graph/error.h"
#include "runtime/kernels/kernel.h"
#include "runtime/kernels/ngemm/ngemm.h"

namespace nuphar {

/// nuphar_igemm_tile_m/_n/_k and nuphar_igemm_permute (already merged with the environment by
/// Settings) as NgemmTiles. Settings accepts any non-negative integer; NGEMM takes 1..1048576,
/// so a value outside that range is an error naming the node and the key. Every NGEMM kernel
/// reads them, even when its weights turn out not to be packable, so a bad setting fails the
/// same way for every model that has such a node.
Expected<ngemm::NgemmTiles> ReadNgemmTiles(const NodeInfo& node);

}  // namespace nuphar
