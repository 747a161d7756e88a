// RuntimeBuildId (build_id.h): the NT_GNU_BUILD_ID note of the loaded object holding this code.
#include "runtime/platform/build_id.h"

#include <dlfcn.h>
#include <elf.h>
#include <link.h>

#include <cstdint>
#include <cstring>

namespace nuphar {
namespace {

struct Search {
  const void* object_base = nullptr;  // dladdr's dli_fbase of this code
  std::string id;
};

// Walks the PT_NOTE segments of the object at `search->object_base` for the GNU build-id note.
int VisitObject(dl_phdr_info* info, size_t, void* data) {
  auto* search = static_cast<Search*>(data);
  bool holds_base = false;
  for (int i = 0; i < info->dlpi_phnum && !holds_base; ++i) {
    const ElfW(Phdr)& ph = info->dlpi_phdr[i];
    if (ph.p_type != PT_LOAD) continue;
    const auto start = info->dlpi_addr + ph.p_vaddr;
    const auto base = reinterpret_cast<ElfW(Addr)>(search->object_base);
    holds_base = base >= start && base < start + ph.p_memsz;
  }
  if (!holds_base) return 0;
  for (int i = 0; i < info->dlpi_phnum; ++i) {
    const ElfW(Phdr)& ph = info->dlpi_phdr[i];
    if (ph.p_type != PT_NOTE) continue;
    const auto* p = reinterpret_cast<const uint8_t*>(info->dlpi_addr + ph.p_vaddr);
    const uint8_t* end = p + ph.p_memsz;
    while (p + sizeof(ElfW(Nhdr)) <= end) {
      ElfW(Nhdr) note;
      std::memcpy(&note, p, sizeof(note));
      const uint8_t* name = p + sizeof(note);
      const uint8_t* desc = name + ((note.n_namesz + 3) & ~3u);
      const uint8_t* next = desc + ((note.n_descsz + 3) & ~3u);
      if (next > end) break;
      if (note.n_type == NT_GNU_BUILD_ID && note.n_namesz == 4 && std::memcmp(name, "GNU", 4) == 0) {
        static const char* digits = "0123456789abcdef";
        for (uint32_t k = 0; k < note.n_descsz; ++k) {
          search->id.push_back(digits[desc[k] >> 4]);
          search->id.push_back(digits[desc[k] & 15]);
        }
        return 1;
      }
      p = next;
    }
  }
  return 1;  // the object holding this code, without a build id
}

}  // namespace

const std::string& RuntimeBuildId() {
  static const std::string id = [] {
    Search search;
    Dl_info info;
    if (::dladdr(reinterpret_cast<const void*>(&RuntimeBuildId), &info) == 0 || !info.dli_fbase) return std::string();
    search.object_base = info.dli_fbase;
    ::dl_iterate_phdr(VisitObject, &search);
    return search.id;
  }();
  return id;
}

}  // namespace nuphar
