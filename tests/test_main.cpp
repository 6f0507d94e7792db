// SPDX-License-Identifier: Apache-2.0
// The test binary's setup: the device, the caches and the temp folders its tests share. Catch2's
// main is tests/catch_main.cpp.
#include <catch2/catch.hpp>

#include <fcntl.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <vector>

#include "src/core/error.hpp"
#include "src/core/json_util.hpp"
#include "tests/temp_dirs.hpp"
#include "tests/test_support.hpp"

extern char** environ;

namespace {
// The commands the tests start share one binary cache, but each test counts what its own search
// measures: results of other tests' searches must not be taken from the evaluation cache. The
// tests of that cache name their own folder.
const bool kNoSharedEvaluationCache = ::setenv("GEMMTUNE_EVALUATION_CACHE", "none", 0) == 0;
}  // namespace

namespace gemmtune::test {

namespace {
std::string slurp(const std::string& path) {
  std::ifstream in(path);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}
}  // namespace

pid_t spawn_gemmtune(const std::vector<std::string>& args, const std::string& dir) {
  std::vector<std::string> all = {GEMMTUNE_BINARY};
  all.insert(all.end(), args.begin(), args.end());
  std::vector<char*> argv;
  for (auto& a : all) argv.push_back(a.data());
  argv.push_back(nullptr);
  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  posix_spawn_file_actions_addopen(&actions, 1, (dir + "/bg.out").c_str(),
                                   O_WRONLY | O_CREAT | O_TRUNC, 0644);
  posix_spawn_file_actions_addopen(&actions, 2, (dir + "/bg.err").c_str(),
                                   O_WRONLY | O_CREAT | O_TRUNC, 0644);
  pid_t pid = -1;
  const int rc = posix_spawn(&pid, argv[0], &actions, nullptr, argv.data(), environ);
  posix_spawn_file_actions_destroy(&actions);
  REQUIRE(rc == 0);
  return pid;
}

size_t count_journal_results(const std::string& journal) {
  std::ifstream in(journal);
  std::string line;
  size_t n = 0;
  while (std::getline(in, line)) n += line.find("\"type\":\"result\"") != std::string::npos;
  return n;
}

std::string temp_dir(const std::string& tag) {
  return fresh_temp_dir("gemmtune-test-" + tag);
}

std::string profile_load_error(const nlohmann::json& j) {
  const std::string path = temp_dir("profile") + "/bad.json";
  write_json_atomic(path, j);
  try {
    load_profile(path);
  } catch (const Error& e) {
    return e.what();
  }
  return "";
}

const TestDevice& test_device() {
  static const TestDevice d = [] {
    TestDevice x;
    x.profiles = ProfileSet::load_dir(source_path("devices"));
    const auto devices = list_devices(&x.profiles);
    if (!devices.empty()) x.device = select_device_from(devices, "");
    // PoCL keeps its own cache of builds under $XDG_CACHE_HOME, shared by every test process;
    // a binary cache of gemmtune's would make it compile every kernel twice (scripts/test.sh).
    x.cache_dir = "none";
    return x;
  }();
  return d;
}

bool device_required() {
  const char* v = std::getenv("GEMMTUNE_REQUIRE_DEVICE");
  return v != nullptr && *v != '\0' && std::string(v) != "0";
}

void unavailable(const std::string& why) {
  if (device_required()) FAIL(why + ", and GEMMTUNE_REQUIRE_DEVICE is set: device tests must run");
  WARN(why + ": skipped");
}

EvaluatorOptions EvaluatorSettings::options() const {
  EvaluatorOptions o;
  o.templates_dir = templates_dir;
  o.cache_dir = cache_dir;
  o.compile_threads = compile_threads;
  o.measure.warmup_runs = warmup_runs;
  o.measure.min_runs = min_runs;
  o.measure.min_time_ms = min_time_ms;
  o.measure.max_runs = max_runs;
  o.measure.data_seed = data_seed;
  return o;
}

TemplateEvaluators::TemplateEvaluators(const Device& device, const DeviceProfile* profile,
                                       const EvaluatorSettings& settings)
    : device_(device), options_(settings.options()) {
  if (profile) profile_ = *profile;
}

DeviceEvaluator& TemplateEvaluators::of(const std::string& kernel) {
  auto& ev = evaluators_[kernel];
  if (!ev) ev = make_evaluator(kernel, device_, profile_ ? &*profile_ : nullptr, options_);
  return *ev;
}

Result TemplateEvaluators::evaluate(const KernelCase& c, const Configuration& config) {
  return of(c.kernel).evaluate(c, config);
}

void TemplateEvaluators::prepare(const KernelCase& c, const std::vector<Configuration>& upcoming) {
  of(c.kernel).prepare(c, upcoming);
}

const KernelSpec& TemplateEvaluators::spec(const std::string& kernel) {
  return of(kernel).spec();
}

EvaluatorSettings quick_evaluator_options() {
  EvaluatorSettings o;
  o.templates_dir = source_path("kernel_templates");
  o.warmup_runs = 0;
  o.min_runs = 1;
  o.min_time_ms = 0;
  o.compile_threads = 1;
  return o;
}

std::unique_ptr<TemplateEvaluators> make_test_evaluator(const EvaluatorSettings& settings,
                                                        const DeviceProfile* profile) {
  const TestDevice& d = test_device();
  if (!d.device) return nullptr;
  if (!profile) profile = d.profiles.find(d.device->info.profile);
  return std::make_unique<TemplateEvaluators>(*d.device, profile, settings);
}

Configuration small_config(TemplateEvaluators& ev, const std::string& kernel) {
  const KernelSpec& s = ev.spec(kernel);
  if (kernel == "xgemm") {
    return s.complete({{"MWG", 16},
                       {"NWG", 16},
                       {"KWG", 16},
                       {"MDIMC", 8},
                       {"NDIMC", 8},
                       {"MDIMA", 8},
                       {"NDIMB", 8}});
  }
  if (kernel == "xgemm_fast") {
    return s.complete({{"MWG", 16},
                       {"NWG", 16},
                       {"KWG", 8},
                       {"MDIMC", 8},
                       {"NDIMC", 8},
                       {"VWM", 2},
                       {"VWN", 2},
                       {"KWI", 2}});
  }
  return s.complete({{"WGD", 16}, {"MDIMCD", 8}, {"NDIMCD", 8}, {"MDIMAD", 8}, {"NDIMBD", 8}});
}

KernelCase problem_of(const std::string& kernel, const Shape& shape, Order order,
                      const std::string& layout) {
  KernelCase p;
  p.kernel = kernel;
  p.shape = shape;
  p.order = order;
  set_layout(p, layout);
  return p;
}

std::string describe(const KernelCase& p, const Result& r) {
  std::string s = p.kernel + " fp" + to_string(p.precision);
  if (p.batch > 1) s += " batch " + std::to_string(p.batch) + " " + to_string(p.batch_layout);
  s += " " + p.shape.to_string() + " " + p.order_name() + " " + p.layout() +
       " alpha=" + std::to_string(p.alpha) + " beta=" + std::to_string(p.beta);
  if (!p.epilogue.none()) s += " epilogue " + to_string(p.epilogue);
  return s + " " + to_string(r.config) + ": " + to_string(r.status) + " " + r.message;
}

CommandResult run_command_in(const std::string& workdir, const std::string& env,
                             const std::string& command) {
  const std::string dir = temp_dir("cmd");
  const std::string out = dir + "/out", err = dir + "/err";
  std::string cmd = command + " >" + out + " 2>" + err;
  if (!env.empty()) cmd = "env " + env + " " + cmd;
  if (!workdir.empty()) cmd = "cd '" + workdir + "' && " + cmd;
  const int status = std::system(cmd.c_str());
  CommandResult r;
  r.exit_code = WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
  r.out = slurp(out);
  r.err = slurp(err);
  std::filesystem::remove_all(dir);
  return r;
}

CommandResult run_gemmtune_in(const std::string& workdir, const std::string& env,
                              const std::string& args) {
  return run_command_in(workdir, env, std::string(GEMMTUNE_BINARY) + " " + args);
}

CommandResult run_gemmtune(const std::string& args) {
  return run_gemmtune_in("", "", args);
}

}  // namespace gemmtune::test
