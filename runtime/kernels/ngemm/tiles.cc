// Tile settings (R2): parsing and validation of NUPHAR_IGEMM_TILE_M/_N/_K and
// NUPHAR_IGEMM_PERMUTE, and Nuphar's guards applied per call. Bad text is an error value,
// never a crash; any valid tile gives the same results, only the speed changes.
#include <algorithm>
#include <cctype>
#include <cstdlib>

#include "runtime/kernels/ngemm/ngemm.h"
#include "runtime/kernels/ngemm/ngemm_internal.h"

namespace nuphar::ngemm {

namespace {

constexpr int kMaxTile = 1 << 20;
// Default M tile: as many rows as keep the tile's A rows within 256 KB of L2 (so every B panel
// loaded into L1 serves all of them), a multiple of the 6-row micro-block. For M = 100, K = 1024
// this is the whole M, where the former fixed 64 made B stream from L3 twice (68 -> 85 GMAC/s).
constexpr int64_t kDefaultTileABytes = 256 * 1024;
constexpr int64_t kMicroRows = 6;
constexpr int kDefaultTileN = 256;
constexpr int64_t kDefaultTileK = int64_t{1} << 40;  // whole K: C stays in registers

std::string Trim(const std::string& s) {
  size_t b = 0, e = s.size();
  while (b < e && std::isspace(static_cast<unsigned char>(s[b]))) ++b;
  while (e > b && std::isspace(static_cast<unsigned char>(s[e - 1]))) --e;
  return s.substr(b, e - b);
}

}  // namespace

bool ParseTileValue(const std::string& text, int* value, std::string* error) {
  const std::string t = Trim(text);
  if (t.empty()) {
    *value = 0;
    return true;
  }
  int64_t v = 0;
  for (char ch : t) {
    if (!std::isdigit(static_cast<unsigned char>(ch)) || v > kMaxTile) {
      *error = "'" + text + "' is not a tile size (an integer in [1, 1048576])";
      return false;
    }
    v = v * 10 + (ch - '0');
  }
  if (v < 1 || v > kMaxTile) {
    *error = "'" + text + "' is not a tile size (an integer in [1, 1048576])";
    return false;
  }
  *value = static_cast<int>(v);
  return true;
}

bool ParsePermute(const std::string& text, NgemmPermute* permute, std::string* error) {
  std::string t = Trim(text);
  std::transform(t.begin(), t.end(), t.begin(), [](unsigned char c) { return std::tolower(c); });
  if (t.empty() || t == "none") {
    *permute = NgemmPermute::kNone;
  } else if (t == "inner") {
    *permute = NgemmPermute::kInner;
  } else if (t == "outer") {
    *permute = NgemmPermute::kOuter;
  } else if (t == "all") {
    *permute = NgemmPermute::kAll;
  } else {
    *error = "'" + text + "' is not a loop order (none|inner|outer|all)";
    return false;
  }
  return true;
}

bool TilesFromEnvironment(NgemmTiles* tiles, std::string* error) {
  NgemmTiles parsed;
  struct Entry {
    const char* name;
    int* field;
  } entries[] = {{"NUPHAR_IGEMM_TILE_M", &parsed.m}, {"NUPHAR_IGEMM_TILE_N", &parsed.n}, {"NUPHAR_IGEMM_TILE_K", &parsed.k}};
  for (const Entry& e : entries) {
    const char* v = std::getenv(e.name);
    std::string why;
    if (v != nullptr && !ParseTileValue(v, e.field, &why)) {
      *error = std::string(e.name) + ": " + why;
      return false;
    }
  }
  if (const char* v = std::getenv("NUPHAR_IGEMM_PERMUTE")) {
    std::string why;
    if (!ParsePermute(v, &parsed.permute, &why)) {
      *error = "NUPHAR_IGEMM_PERMUTE: " + why;
      return false;
    }
  }
  *tiles = parsed;
  return true;
}

const char* PermuteName(NgemmPermute permute) {
  switch (permute) {
    case NgemmPermute::kNone: return "none";
    case NgemmPermute::kInner: return "inner";
    case NgemmPermute::kOuter: return "outer";
    case NgemmPermute::kAll: return "all";
  }
  return "?";
}

ResolvedTiles ResolveTiles(const NgemmTiles& tiles, int64_t M, int64_t n_pad, int64_t k_pad) {
  ResolvedTiles r;
  const int64_t default_m = std::max<int64_t>(kMicroRows, kDefaultTileABytes / std::max<int64_t>(k_pad, 1) / kMicroRows * kMicroRows);
  r.m = std::max<int64_t>(1, std::min<int64_t>(tiles.m > 0 ? tiles.m : default_m, M));
  r.n = std::min<int64_t>(RoundUp(tiles.n > 0 ? tiles.n : kDefaultTileN, 8), n_pad);
  int64_t k = 4;
  const int64_t want = tiles.k > 0 ? tiles.k : kDefaultTileK;
  while (k < want && k < k_pad) k *= 2;  // power of 2 >= want, then clamped to [4, K_pad]
  r.k = std::min(k, std::max<int64_t>(k_pad, 4));
  r.n_outer = tiles.permute == NgemmPermute::kOuter || tiles.permute == NgemmPermute::kAll;
  r.rows_outer = tiles.permute == NgemmPermute::kInner || tiles.permute == NgemmPermute::kAll;
  return r;
}

}  // namespace nuphar::ngemm
