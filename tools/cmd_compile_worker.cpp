// SPDX-License-Identifier: Apache-2.0
// gemmtune compile-worker: one process of the compile pool that `gemmtune search
// --compile-processes P` starts (search/tuning/compile_pool.hpp has the protocol). It reads one
// {"problem": P, "config": C} line at a time from stdin, builds that configuration into the binary
// cache through the evaluator's own compile() (so the cache key is the one the measurement looks
// up), and answers one line on stdout. One build at a time: the pool's parallelism is processes,
// because some drivers serialize compilation inside a process. Not meant to be run by hand, though
// it can be, with a pipe.
#include <sys/resource.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>

#include <chrono>
#include <map>
#include <memory>
#include <optional>

#include <spdlog/spdlog.h>

#include "search/tuning/channel.hpp"
#include "src/core/error.hpp"
#include "src/device/device.hpp"
#include "src/eval/evaluator_factory.hpp"
#include "tools/commands.hpp"

namespace gemmtune::cli {

namespace {

struct CompileWorkerArgs {
  std::string device;
  std::string cache_dir;
};

// How much lower than the search's own a worker's scheduling priority is (nice steps). A search
// runs as many workers as the host has cores to spare, and each build is throughput: when they
// fill every core, the threads whose delays idle the devices (the strategy proposing, the lanes
// measuring) must still get theirs at once.
constexpr int kWorkerNiceSteps = 10;
constexpr int kLowestPriority = 19;  // the largest nice value

// Lowers this process's priority by kWorkerNiceSteps; returns the nice value it runs at.
int lower_priority() {
  errno = 0;
  const int now = ::getpriority(PRIO_PROCESS, 0);
  if (errno == 0) ::setpriority(PRIO_PROCESS, 0, std::min(kLowestPriority, now + kWorkerNiceSteps));
  errno = 0;
  const int after = ::getpriority(PRIO_PROCESS, 0);
  return errno == 0 ? after : now;
}

std::string outcome_of(const DeviceEvaluator::CompileSummary& s) {
  if (s.built) return "built";
  if (s.cached) return "cached";
  if (s.failed) return "failed";
  if (s.invalid) return "invalid";
  return "skipped";  // a backend that compiles inside another library
}

void run_compile_worker(const GlobalOptions& options, const CompileWorkerArgs& a) {
  // Answers go to the stdout this process was given; from here on stdout is stderr, so that
  // whatever the driver prints cannot corrupt them.
  const int answers = ::dup(1);
  if (answers < 0) throw Error(ErrorCode::kInternal, "compile-worker: cannot duplicate stdout");
  ::dup2(2, 1);
  auto say = [answers](const nlohmann::json& j) { return write_line(answers, j.dump()); };

  std::optional<Device> device;
  const DeviceProfile* profile = nullptr;
  ProfileSet profiles;
  try {
    profiles = load_profiles(options);
    // The search that started this process has said what the device's notes are.
    device = select_device_from(list_devices(&profiles), a.device);
    profile = profiles.match(device->info);
  } catch (const std::exception& e) {
    say({{"fatal", e.what()}});
    throw;
  }
  // The ready line says the priority the builds run at (checked by the tests).
  if (!say({{"ready", true}, {"nice", lower_priority()}})) return;

  EvaluatorOptions eo;
  eo.templates_dir = templates_dir(options);
  eo.cache_dir = a.cache_dir;
  eo.compile_threads = 1;
  std::map<std::string, std::unique_ptr<DeviceEvaluator>> evaluators;  // per kernel
  std::string buffer, line;
  while (read_line(0, buffer, &line)) {
    if (line.find_first_not_of(" \t\r") == std::string::npos) continue;
    nlohmann::json answer;
    const auto t0 = std::chrono::steady_clock::now();
    try {
      const auto request = nlohmann::json::parse(line);
      const Problem problem = request.at("problem").get<Problem>();
      // The request names the kernel inside its problem (compile_pool.hpp).
      const std::string kernel = kernel_in_problem_json(request.at("problem"));
      const Configuration config = configuration_from_json(request.at("config"));
      auto& evaluator = evaluators[kernel];
      if (!evaluator) evaluator = make_evaluator(kernel, *device, profile, eo);
      const auto summary = evaluator->compile(problem, {config});
      answer["outcome"] = outcome_of(summary);
      // Where the build's time went (the rest of "ms": the request, the source, the checks).
      answer["driver_ms"] = summary.driver_ms;
      answer["cache_ms"] = summary.cache_ms;
    } catch (const std::exception& e) {
      // One configuration's problem (or a malformed request): reported, and the next one comes.
      answer = {{"outcome", "failed"}, {"message", e.what()}};
    }
    answer["ms"] =
        std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
    if (!say(answer)) return;
  }
}

}  // namespace

void set_compile_worker_command(CLI::App& app, GlobalOptions& options) {
  auto a = std::make_shared<CompileWorkerArgs>();
  auto* cmd = app.add_subcommand("compile-worker",
                                 "Compile process of search --compile-processes (internal)");
  cmd->group("");  // hidden from --help
  add_device_option(*cmd, a->device);
  cmd->add_option("--cache-dir", a->cache_dir, "Binary cache folder (default: the user's cache)");
  cmd->callback([&options, a]() { run_compile_worker(options, *a); });
}

}  // namespace gemmtune::cli
