// SPDX-License-Identifier: Apache-2.0
#include "src/preload/real_clblast.hpp"

#include <dlfcn.h>
#include <link.h>

#include <cstdio>
#include <cstring>
#include <string>
#include <vector>

namespace gemmtune::preload {

namespace {

// A loaded object whose file name starts with this is a CLBlast, whatever its soname (a copy
// bundled with a Python wheel carries a name of its own).
constexpr const char* kClblastFilePrefix = "libclblast";

// The objects of the process whose file name starts with kClblastFilePrefix.
std::vector<std::string> loaded_clblast_files() {
  std::vector<std::string> files;
  dl_iterate_phdr(
      [](dl_phdr_info* info, size_t, void* data) {
        if (!info->dlpi_name || !*info->dlpi_name) return 0;
        const char* slash = std::strrchr(info->dlpi_name, '/');
        const char* base = slash ? slash + 1 : info->dlpi_name;
        if (std::strncmp(base, kClblastFilePrefix, std::strlen(kClblastFilePrefix)) == 0) {
          static_cast<std::vector<std::string>*>(data)->push_back(info->dlpi_name);
        }
        return 0;
      },
      &files);
  return files;
}

}  // namespace

void* real_definition(const void* own) {
  Dl_info self{};
  if (!dladdr(own, &self) || !self.dli_sname) {
    std::fputs("gemmtune_clblast: an entry point has no name in the dynamic symbol table\n",
               stderr);
    return nullptr;
  }
  const char* name = self.dli_sname;
  // A definition found in this library itself would call itself forever.
  auto foreign = [&](void* found) -> void* {
    Dl_info where{};
    return found && dladdr(found, &where) && where.dli_fbase != self.dli_fbase ? found : nullptr;
  };
  if (void* found = foreign(dlsym(RTLD_NEXT, name))) return found;
  // The handles stay open: the definitions they give are called for the rest of the process.
  auto from = [&](const std::string& file, int flags) -> void* {
    void* handle = dlopen(file.c_str(), flags);
    if (!handle) return nullptr;
    if (void* found = foreign(dlsym(handle, name))) return found;
    dlclose(handle);
    return nullptr;
  };
  std::vector<std::string> loaded{kClblastSoname};
  for (auto& file : loaded_clblast_files()) loaded.push_back(std::move(file));
  for (const std::string& file : loaded) {
    if (void* found = from(file, RTLD_LAZY | RTLD_NOLOAD)) return found;
  }
  if (void* found = from(kClblastSoname, RTLD_NOW | RTLD_LOCAL)) return found;
  std::fprintf(stderr, "gemmtune_clblast: no CLBlast in the process or as %s defines %s\n",
               kClblastSoname, name);
  return nullptr;
}

}  // namespace gemmtune::preload
