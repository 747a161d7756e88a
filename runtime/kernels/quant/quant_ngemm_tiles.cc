// The session's NGEMM blocking settings (see quant_ngemm_tiles.h).
#include "runtime/kernels/quant/quant_ngemm_tiles.h"

#include <string>
#include <utility>

namespace nuphar {

Expected<ngemm::NgemmTiles> ReadNgemmTiles(const NodeInfo& node) {
  ngemm::NgemmTiles tiles;
  std::string error;
  const std::pair<const char*, int*> keys[] = {
      {"nuphar_igemm_tile_m", &tiles.m}, {"nuphar_igemm_tile_n", &tiles.n}, {"nuphar_igemm_tile_k", &tiles.k}};
  for (const auto& [key, field] : keys)
    if (!ngemm::ParseTileValue(node.setting(key), field, &error)) return node.Error(std::string(key) + ": " + error);
  if (!ngemm::ParsePermute(node.setting("nuphar_igemm_permute"), &tiles.permute, &error))
    return node.Error("nuphar_igemm_permute: " + error);
  // Settings::Parse has checked the name and that the CPU supports it.
  if (const std::string target = node.setting("nuphar_codegen_target"); !target.empty()) tiles.tier = ParseIsaTier(target);
  tiles.pool = node.thread_pool();
  tiles.parallel_min_work = node.parallel_min_work();
  return tiles;
}

}  // namespace nuphar
