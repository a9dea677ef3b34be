#include "core/build_identity.h"

#include <dlfcn.h>
#include <elf.h>
#include <link.h>
#include <sys/stat.h>

#include <cstdio>
#include <cstring>

namespace anvil::core {
namespace {

struct Search {
  const void* base;  // the object's load address, from dladdr
  std::string hex;
};

constexpr size_t Align4(size_t n) { return (n + 3) & ~size_t{3}; }

// Walks the PT_NOTE segments of the object loaded at `search->base`.
int FindBuildId(dl_phdr_info* info, size_t, void* data) {
  auto* search = static_cast<Search*>(data);
  bool ours = false;
  for (int k = 0; k < info->dlpi_phnum && !ours; ++k) {
    const ElfW(Phdr)& p = info->dlpi_phdr[k];
    ours = p.p_type == PT_LOAD && p.p_offset == 0 &&
           reinterpret_cast<const void*>(info->dlpi_addr + p.p_vaddr) == search->base;
  }
  if (!ours) return 0;
  for (int k = 0; k < info->dlpi_phnum; ++k) {
    const ElfW(Phdr)& p = info->dlpi_phdr[k];
    if (p.p_type != PT_NOTE) continue;
    const char* at = reinterpret_cast<const char*>(info->dlpi_addr + p.p_vaddr);
    const char* end = at + p.p_memsz;
    while (at + sizeof(ElfW(Nhdr)) <= end) {
      ElfW(Nhdr) note;
      std::memcpy(&note, at, sizeof(note));
      const char* name = at + sizeof(note);
      const char* desc = name + Align4(note.n_namesz);
      if (desc + note.n_descsz > end) break;
      if (note.n_type == NT_GNU_BUILD_ID && note.n_namesz == 4 && std::memcmp(name, "GNU", 4) == 0) {
        char hex[3];
        for (size_t b = 0; b < note.n_descsz; ++b) {
          std::snprintf(hex, sizeof(hex), "%02x", static_cast<unsigned char>(desc[b]));
          search->hex += hex;
        }
        return 1;
      }
      at = desc + Align4(note.n_descsz);
    }
  }
  return 1;  // our object, without a build ID
}

}  // namespace

std::string BuildIdentityOf(const void* address) {
  Dl_info info{};
  if (!dladdr(address, &info) || !info.dli_fbase) return "";
  Search search{info.dli_fbase, ""};
  dl_iterate_phdr(&FindBuildId, &search);
  if (!search.hex.empty()) return "build-id:" + search.hex;
  struct stat st {};
  const std::string path = info.dli_fname ? info.dli_fname : "";
  if (path.empty() || stat(path.c_str(), &st) != 0) return "file:" + path;
  return "file:" + path + ":" + std::to_string(st.st_size) + ":" + std::to_string(st.st_mtim.tv_sec) + "." +
         std::to_string(st.st_mtim.tv_nsec);
}

}  // namespace anvil::core
