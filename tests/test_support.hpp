// Helpers shared by the tests: paths of the source tree and running the gemmtune binary.
#pragma once

#include <string>

namespace gemmtune::test {

inline std::string source_path(const std::string& relative) {
  return std::string(GEMMTUNE_SOURCE_DIR) + "/" + relative;
}

struct CommandResult {
  int exit_code = 0;
  std::string out;  // stdout
  std::string err;  // stderr
};

// Runs the gemmtune binary with `args` (a shell-quoted string) and captures its output.
CommandResult run_gemmtune(const std::string& args);

// A fresh empty folder under the system temp folder, removed at exit of the test process.
std::string temp_dir(const std::string& tag);

}  // namespace gemmtune::test
