// SPDX-License-Identifier: Apache-2.0
#include "src/core/data_paths.hpp"

#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <vector>

#include <spdlog/spdlog.h>

#include "src/core/configured.hpp"
#include "src/core/error.hpp"

namespace gemmtune {

namespace fs = std::filesystem;

std::string executable_dir() {
  std::error_code ec;
  auto exe = fs::read_symlink("/proc/self/exe", ec);
  if (ec) return fs::current_path().string();
  return exe.parent_path().string();
}

std::string find_data_dir(const std::string& name, const std::string& override_dir) {
  std::error_code ec;
  if (!override_dir.empty()) {
    if (!fs::is_directory(override_dir, ec)) {
      throw invalid_argument("folder '" + override_dir + "' given for " + name + " does not exist");
    }
    return override_dir;
  }
  std::vector<fs::path> candidates;
  if (const char* env = std::getenv("GEMMTUNE_DATA_DIR"); env && *env) {
    candidates.push_back(fs::path(env) / name);
  }
  const fs::path exe = executable_dir();
  candidates.push_back(exe / name);
  candidates.push_back(exe.parent_path() / name);
  candidates.push_back(exe.parent_path().parent_path() / name);
  candidates.push_back(exe.parent_path() / "share" / "gemmtune" / name);
  // Last resort for a build folder anywhere outside the source tree: the sources it was
  // configured from. An installed tree has found its share/ folder above.
  if (const std::string source = configured::source_dir(); !source.empty()) {
    candidates.push_back(fs::path(source) / name);
  }
  std::string looked;
  for (const auto& c : candidates) {
    if (fs::is_directory(c, ec)) {
      spdlog::debug("{} folder: {}", name, c.lexically_normal().string());
      return c.lexically_normal().string();
    }
    looked += (looked.empty() ? "" : ", ") + c.lexically_normal().string();
  }
  throw Error(ErrorCode::kInvalidFile,
              "cannot find the " + name + " folder (looked in " + looked + "); pass --" +
                  (name == "kernel_templates" ? std::string("templates") : std::string("devices")) +
                  " DIR");
}

}  // namespace gemmtune
