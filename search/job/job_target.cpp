// SPDX-License-Identifier: Apache-2.0
// What a search job measures on: a recorded space, or a device through a worker process (in this
// process with `in_process`), and the problems it tunes there.
#include <algorithm>
#include <filesystem>
#include <thread>

#include <fmt/format.h>
#include <fmt/ranges.h>
#include <spdlog/spdlog.h>

#include "search/job/job_parts.hpp"
#include "search/tuning/search_checks.hpp"
#include "search/tuning/worker_evaluator.hpp"
#include "src/core/error.hpp"
#include "src/device/device.hpp"
#include "src/device/device_set.hpp"
#include "src/eval/evaluator_factory.hpp"
#include "src/kernel/gemm_view.hpp"

namespace gemmtune {

namespace {

// Compile processes a search starts at least where the cores allow: NVIDIA's compiler built 941
// kernels a minute in 16 processes on an H100's host (results/h100/compile/README.md).
constexpr int kMinCompileProcesses = 16;
// ... and at most: each holds a driver's compiler in memory (hundreds of MB on NVIDIA).
constexpr int kMaxCompileProcesses = 64;

// The worker also takes the measurement settings of the job.
std::unique_ptr<Evaluator> make_worker_evaluator(const SearchJobOptions& a, const Device& device) {
  WorkerOptions w;
  w.argv = a.helper_command;
  const MeasureSettings& m = a.eval.measure;
  w.argv.insert(w.argv.end(), {"worker",
                               "--fd",
                               "3",
                               "--device",
                               device.info.selector(),
                               "--kernel",
                               a.kernel,
                               "--compile-threads",
                               std::to_string(a.eval.compile_threads),
                               "--warmup",
                               std::to_string(m.warmup_runs),
                               "--min-runs",
                               std::to_string(m.min_runs),
                               "--min-time-ms",
                               fmt::format("{}", m.min_time_ms),
                               "--max-runs",
                               std::to_string(m.max_runs),
                               "--seed",
                               std::to_string(m.data_seed),
                               "--clock",
                               to_string(m.clock),
                               "--queued-calls",
                               std::to_string(m.queued_calls),
                               "--stable-cv",
                               fmt::format("{}", m.stable_cv)});
  if (!a.eval.cache_dir.empty()) w.argv.insert(w.argv.end(), {"--cache-dir", a.eval.cache_dir});
  w.kernel = a.kernel;
  w.eval_timeout_s = a.eval_timeout_s;
  w.start_timeout_s = std::max(60.0, a.eval_timeout_s);
  return std::make_unique<WorkerEvaluator>(std::move(w));
}

// NVIDIA's compiler scales with processes, not threads (results/h100/compile/README.md), so a GPU
// gets a pool by default; on a CPU device PoCL's compiler would compete with the measurement for
// the same cores, so there the default is none.
int default_compile_processes(const DeviceInfo& info, size_t devices) {
  if (info.type == "cpu") return 0;
  const int cores = int(std::max(1u, std::thread::hardware_concurrency()));
  // Every core but one per measuring device and one for the strategy builds: a search that
  // measures a configuration in a few tens of ms on a GPU needs a build (about 0.75 s on NVIDIA)
  // every few tens of ms per device, more than 16 processes deliver to one H200; the strategy
  // proposes in its own thread, some 10 ms a proposal (results/h200/two-gpu-*).
  const int spare = std::max(1, cores - int(devices) - 1);
  return std::min(kMaxCompileProcesses, std::max(std::min(kMinCompileProcesses, cores), spare));
}

// Wraps the evaluator in a pool of `gemmtune compile-worker` processes building into its cache.
void add_compile_pool(SearchJobOptions& a, const Device& device, size_t devices, SearchTarget& t) {
  if (a.compile_processes > 0 && a.eval.cache_dir == "none") {
    throw invalid_argument(
        "--compile-processes builds into the binary cache: not with --cache-dir none");
  }
  if (a.compile_processes < 0) {
    a.compile_processes =
        a.eval.cache_dir == "none" ? 0 : default_compile_processes(device.info, devices);
  }
  if (a.compile_processes == 0) return;
  CompilePoolOptions o;
  o.argv = a.helper_command;
  o.argv.insert(o.argv.end(), {"compile-worker", "--device", device.info.selector()});
  if (!a.eval.cache_dir.empty()) o.argv.insert(o.argv.end(), {"--cache-dir", a.eval.cache_dir});
  o.kernel = a.kernel;
  if (t.spec) o.runtime_parameters = t.spec->runtime_parameters();
  o.processes = a.compile_processes;
  // Long enough for any single build; a hung compiler must not hold the search for longer than
  // an evaluation may take.
  o.wait_s = a.eval_timeout_s;
  o.build_timeout_s = std::max(60.0, 2 * a.eval_timeout_s);
  auto pool = std::make_unique<CompilePool>(std::move(t.evaluator), std::move(o));
  t.pool = pool.get();
  t.evaluator = std::move(pool);
  spdlog::info("compiling in {} processes ahead of the measurement", a.compile_processes);
}

}  // namespace

std::string spec_path(const std::string& templates_dir, const std::string& kernel) {
  return templates_dir + "/" + kernel + ".json";
}

KernelChoice default_kernel(const SearchJobOptions& a) {
  const auto profiles = job_profiles(a);
  const Device device = select_devices(a.device, &profiles).front();
  const DeviceProfile* profile = profiles.match(device.info);
  if (profile && !profile->default_kernel.empty()) {
    return {profile->default_kernel, "the default of the " + profile->name + " profile (" +
                                         profile->default_kernel_source + ")"};
  }
  return {"auto", "the " + (profile ? profile->name : std::string("matched")) +
                      " profile names no default template: every template gets a share of the "
                      "budget and the fastest is kept"};
}

std::vector<std::string> auto_kernels(const std::string& templates_dir, const std::string& space,
                                      const Problem& problem) {
  std::vector<std::string> names;
  std::vector<std::filesystem::path> files;
  for (const auto& e : std::filesystem::directory_iterator(templates_dir)) {
    if (e.path().extension() == ".json") files.push_back(e.path());
  }
  std::sort(files.begin(), files.end());
  const Epilogue& epilogue = problem.epilogue;
  for (const auto& f : files) {
    const KernelSpec spec = KernelSpec::load(f.string());
    if (spec.backend() != Backend::kOpenCl) continue;
    if (!space.empty() && !spec.spaces().count(space)) continue;
    if (!supports_epilogue(spec, epilogue)) continue;
    if (problem.batch > 1 && !supports_batch(spec, problem.batch_layout)) continue;
    names.push_back(spec.name());
  }
  if (names.empty()) throw invalid_argument("--kernel auto: no template implements this problem");
  return names;
}

SearchTarget open_replay_target(SearchJobOptions& a) {
  if (a.compile_processes > 0)
    throw invalid_argument("--compile-processes: a replay builds nothing");
  if (!a.space_from.empty())
    throw invalid_argument("--space-from: a replay answers for its recorded configurations only");
  SearchTarget t;
  auto r = std::make_unique<ReplayEvaluator>(a.replay, a.replay_delay_ms);
  t.replay = r.get();
  t.evaluator = std::move(r);
  const JsonReader h = t.replay->header_reader();
  const auto device = h.optional_object("device");
  t.device_json = device ? device->value() : nlohmann::json::object();
  t.device_id = device ? device->string_or("id", "replay") : "replay";
  const std::string recorded_kernel = t.replay->kernel();
  if (a.given.count("kernel") == 0 && a.resume.empty()) a.kernel = recorded_kernel;
  if (a.kernel != recorded_kernel) {
    throw invalid_argument("replay " + a.replay + " records kernel " + recorded_kernel + ", not " +
                           a.kernel);
  }
  if (a.space.empty()) a.space = h.string_or("space", "recorded");
  // An older header may hold the name only: the other fields are then empty.
  if (device) t.db.device = DatabaseDevice::from(device->convert<DeviceInfo>());
  t.db.path = a.no_db ? "" : a.db;
  return t;
}

SearchTarget open_device_target(SearchJobOptions& a) {
  SearchTarget t;
  const auto profiles = job_profiles(a);
  const std::vector<Device> devices = select_devices(a.device, &profiles);
  const Device& device = devices.front();
  for (const auto& d : devices) t.device_selectors.push_back(d.info.selector());
  const DeviceProfile* profile = profiles.match(device.info);
  t.device_json = device.info;
  t.device_json["id"] = device.info.id();
  t.device_id = device.info.id();
  t.spec = KernelSpec::load_named(a.eval.templates_dir, a.kernel);
  t.limits = device_limits(device.info, profile);
  t.db.device = DatabaseDevice::from(device.info);
  t.db.path = a.no_db ? "" : a.db.empty() ? Database::default_path(device.info) : a.db;
  if (a.space.empty()) a.space = device.info.type == "cpu" ? "cpu" : "gpu";
  if (a.eval.compile_threads <= 0) {
    a.eval.compile_threads = int(std::max(1u, std::thread::hardware_concurrency()));
  }
  if (a.replay.empty()) {
    t.cache.emplace(a.eval.cache_dir, device.info, a.kernel,
                    template_fingerprint(a.eval.templates_dir, a.kernel) + "|" +
                        timing_identity(a.eval.measure));
  }
  auto measure_on = [&](const Device& d) {
    return a.in_process ? make_evaluator(a.kernel, d, profile, a.eval)
                        : make_worker_evaluator(a, d);
  };
  t.evaluator = measure_on(device);
  add_compile_pool(a, device, devices.size(), t);
  for (size_t i = 1; i < devices.size(); ++i) {
    auto other = measure_on(devices[i]);
    t.other_devices.push_back(t.pool ? t.pool->share(std::move(other)) : std::move(other));
  }
  if (devices.size() > 1) {
    spdlog::info("measuring on {} devices at once: {}", devices.size(),
                 fmt::join(t.device_selectors, ", "));
  }
  return t;
}

std::vector<Evaluator*> device_lanes(const SearchTarget& t) {
  std::vector<Evaluator*> lanes{t.evaluator.get()};
  for (const auto& e : t.other_devices) lanes.push_back(e.get());
  return lanes;
}

std::vector<Problem> search_problems(const SearchJobOptions& a,
                                     const std::vector<WorkloadShape>& workload_shapes,
                                     Problem base, ReplayEvaluator* replay) {
  std::vector<Shape> shapes;
  if (!a.workload.empty()) {
    if (!a.shapes.empty())
      throw invalid_argument("--workload names the shapes: not with -s/--shapes-file");
    for (const auto& w : workload_shapes) shapes.push_back(w.shape);
  } else {
    shapes = a.shapes;
  }
  if (shapes.empty()) {
    if (!replay) throw invalid_argument("no shape given (use -s/--shapes or --shapes-file)");
    for (const auto& p : replay->problems()) shapes.push_back(p.shape);
    // A replay's problems carry their own layout and precision.
    base = replay->problems().front();
  }
  std::vector<Problem> problems;
  for (const auto& s : shapes) {
    Problem p = base;
    p.shape = s;
    if (replay && !replay->has_problem(p)) {
      // Take layout, precision and scaling from the recording when only the shape was given.
      bool found = false;
      for (const auto& q : replay->problems()) {
        if (q.shape == s) {
          p = q;
          found = true;
          break;
        }
      }
      if (!found) replay->configurations(p);  // throws, naming the recorded shapes
    }
    check_index_range(p);
    problems.push_back(p);
  }
  return problems;
}

}  // namespace gemmtune
