// SPDX-License-Identifier: Apache-2.0
// Fresh folders under the system temp folder for one test process, removed when it exits. Header
// only, so that libgemmtune's tests (tests/src/api), which link no internal layer, use it too.
#pragma once

#include <unistd.h>

#include <filesystem>
#include <string>
#include <system_error>
#include <vector>

namespace gemmtune::test {

// A fresh empty folder named `<prefix>-<process id>-<counter>`.
inline std::string fresh_temp_dir(const std::string& prefix) {
  namespace fs = std::filesystem;
  struct Made {
    std::vector<fs::path> dirs;
    ~Made() {
      for (const auto& dir : dirs) {
        std::error_code ec;
        fs::remove_all(dir, ec);
      }
    }
  };
  static Made made;
  static int counter = 0;
  const fs::path dir = fs::temp_directory_path() / (prefix + "-" + std::to_string(::getpid()) +
                                                    "-" + std::to_string(counter++));
  fs::remove_all(dir);
  fs::create_directories(dir);
  made.dirs.push_back(dir);
  return dir.string();
}

}  // namespace gemmtune::test
