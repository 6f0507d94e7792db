// Helpers shared by the tests: paths of the source tree and running the gemmtune binary.
#pragma once

#include <optional>
#include <string>

#include "src/device.hpp"
#include "src/device_profile.hpp"

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

// The device the OpenCL tests run on (the first GPU, else the first CPU device: PoCL in CI) with
// the project's profiles, looked up once per test process; `device` is empty where OpenCL lists
// none. `cache_dir` is a binary cache of this process, so that each kernel variant is compiled
// once however many tests use it.
struct TestDevice {
  ProfileSet profiles;
  std::optional<Device> device;
  std::string cache_dir;
};
const TestDevice& test_device();

}  // namespace gemmtune::test
