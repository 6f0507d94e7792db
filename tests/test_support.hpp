// SPDX-License-Identifier: Apache-2.0
// Helpers shared by the tests: paths of the source tree and running the gemmtune binary.
#pragma once

#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include <sys/types.h>

#include <nlohmann/json.hpp>

#include "src/device/device.hpp"
#include "src/device/device_profile.hpp"
#include "src/eval/evaluator_factory.hpp"

namespace gemmtune::test {

inline std::string source_path(const std::string& relative) {
  return std::string(GEMMTUNE_SOURCE_DIR) + "/" + relative;
}

struct CommandResult {
  int exit_code = 0;
  std::string out;  // stdout
  std::string err;  // stderr
};

// Runs the shell command line `command` in the working folder `workdir` (the current one when
// empty), with `env` ("NAME=value ...", "-u NAME" to unset; as env(1) takes them) added to the
// environment, and captures its output.
CommandResult run_command_in(const std::string& workdir, const std::string& env,
                             const std::string& command);
// Runs the gemmtune binary with `args` (a shell-quoted string) and captures its output.
CommandResult run_gemmtune(const std::string& args);
// The same as run_command_in does it.
CommandResult run_gemmtune_in(const std::string& workdir, const std::string& env,
                              const std::string& args);

// Starts the gemmtune binary with `args` in the background, stdout and stderr to `dir`/bg.out and
// `dir`/bg.err; the caller waits for the process.
pid_t spawn_gemmtune(const std::vector<std::string>& args, const std::string& dir);

// Result records in a journal file (0 when it does not exist), counted on the text as a second
// process appends to it.
size_t count_journal_results(const std::string& journal);

// A fresh empty folder under the system temp folder, removed when the test process exits.
std::string temp_dir(const std::string& tag);

// The error of loading device profile `j` from a file (the way profiles are read), or "" when it
// loads.
std::string profile_load_error(const nlohmann::json& j);

// The device the OpenCL tests run on (the first GPU, else the first CPU device: PoCL in CI) with
// the project's profiles, looked up once per test process; `device` is empty where OpenCL lists
// none. `cache_dir` is "none": tests of the binary cache name their own folder.
struct TestDevice {
  ProfileSet profiles;
  std::optional<Device> device;
  std::string cache_dir;
};
const TestDevice& test_device();

// Device tests never pass silently. With GEMMTUNE_REQUIRE_DEVICE set to anything but "" or "0"
// (scripts/test.sh and ctest set it: PoCL is always installed there) a device test that cannot
// run fails; without it, it is skipped with a warning. `why` names what is missing: "no OpenCL
// device", "the device has no cl_khr_fp64". Use as
//   if (!ev) return test::unavailable("no OpenCL device");
bool device_required();
void unavailable(const std::string& why);

// What the device tests vary about an evaluator, in one flat struct.
struct EvaluatorSettings {
  std::string templates_dir;
  std::string cache_dir;
  int warmup_runs = 1;
  int min_runs = 3;
  double min_time_ms = 20.0;
  int max_runs = 200;
  int compile_threads = 0;
  uint64_t data_seed = 42;
  EvaluatorOptions options() const;
};

// A problem with the template a device test computes it with. The device tests change the
// problem's fields in place (p.batch = 4, ...), so the kernel rides along as a derived member
// rather than beside it.
struct KernelCase : Problem {
  std::string kernel = kDefaultKernel;
};

// The evaluators of every template a test names, each made by make_evaluator (the factory every
// command uses) on first use and chosen by the case's kernel.
class TemplateEvaluators {
 public:
  TemplateEvaluators(const Device& device, const DeviceProfile* profile,
                     const EvaluatorSettings& settings);
  Result evaluate(const KernelCase& c, const Configuration& config);
  void prepare(const KernelCase& c, const std::vector<Configuration>& upcoming);
  // The declaration of `kernel`. Throws Error for an unknown kernel.
  const KernelSpec& spec(const std::string& kernel);

 private:
  DeviceEvaluator& of(const std::string& kernel);
  const Device& device_;
  std::optional<DeviceProfile> profile_;
  EvaluatorOptions options_;
  std::map<std::string, std::unique_ptr<DeviceEvaluator>> evaluators_;
};

// Settings that measure a configuration once, quickly: the source tree's templates, no warm-up,
// one timed run, one compile thread; binaries in the default cache ($GEMMTUNE_BINARY_CACHE).
EvaluatorSettings quick_evaluator_options();
// The evaluators on test_device() with the profile it matched (`profile` instead, when given);
// null where OpenCL lists no device.
std::unique_ptr<TemplateEvaluators> make_test_evaluator(const EvaluatorSettings& settings,
                                                        const DeviceProfile* profile = nullptr);

// A one-line account of an evaluation for INFO: the whole problem, the configuration, the status.
std::string describe(const KernelCase& p, const Result& r);

// Small tiles of `kernel` (xgemm, xgemm_fast or xgemm_direct) for the device tests: 16x16
// work-group tiles on 8x8 threads (little padding for xgemm, edges crossed for the others,
// vectors of 2), the other parameters at their defaults.
Configuration small_config(TemplateEvaluators& ev, const std::string& kernel);

// A problem of `kernel` with this shape, storage order and layout ("NN" ...), FP32, alpha 1,
// beta 0, one GEMM.
KernelCase problem_of(const std::string& kernel, const Shape& shape, Order order,
                      const std::string& layout);

// The xgemm_fast parameters the selection tests serve at GPU shapes: 64x64 tiles on 16x8
// work-items, a K tile of 16 unrolled by 8, 2-wide fragments; `more` adds or replaces parameters.
inline Configuration fast_64x64(const Configuration& more = {}) {
  Configuration c{{"MWG", 64}, {"NWG", 64}, {"MDIMC", 16}, {"NDIMC", 8},
                  {"KWG", 16}, {"KWI", 8},  {"VWM", 2},    {"VWN", 2}};
  for (const auto& [name, value] : more) c[name] = value;
  return c;
}

}  // namespace gemmtune::test
