// gemmtune bench: re-measures every entry of a database on the current device and writes a new
// database of the same problems (the input of gemmtune compare).
#include <filesystem>
#include <iostream>
#include <map>
#include <memory>

#include <fmt/format.h>
#include <spdlog/spdlog.h>

#include "src/db/database.hpp"
#include "src/core/error.hpp"
#include "src/eval/evaluator_factory.hpp"
#include "src/core/version.hpp"
#include "tools/commands.hpp"

namespace gemmtune::cli {

void set_bench_command(CLI::App& app, GlobalOptions& options) {
  auto* cmd = app.add_subcommand(
      "bench", "Re-measure every entry of a database on this device into a new database");
  struct Args {
    std::string db, out, device, cache_dir;
    int warmup = 1, min_runs = 5, max_runs = 200;
    double min_time_ms = 50.0;
    uint64_t seed = 42;
  };
  auto a = std::make_shared<Args>();
  cmd->add_option("DB", a->db, "Database to re-measure")->required();
  cmd->add_option("-o,--output", a->out, "Database to write (default: <DB>-bench.json)");
  add_device_option(*cmd, a->device);
  cmd->add_option("--warmup", a->warmup, "Untimed runs first")->capture_default_str();
  cmd->add_option("--min-runs", a->min_runs, "Timed runs at least")->capture_default_str();
  cmd->add_option("--min-time-ms", a->min_time_ms, "Timed milliseconds at least")
      ->capture_default_str();
  cmd->add_option("--max-runs", a->max_runs, "Timed runs at most")->capture_default_str();
  cmd->add_option("--cache", a->cache_dir, "Kernel binary cache folder (\"none\" disables)");
  cmd->add_option("--data-seed", a->seed, "Seed of the input matrices")->capture_default_str();
  cmd->callback([a, &options]() {
    const auto base = Database::load(a->db);
    const auto profiles = load_profiles(options);
    const Device device = select_device(a->device, &profiles);
    const DeviceProfile* profile = profiles.find(device.info.profile);
    const auto here = DatabaseDevice::from(device.info);
    if (!base.device.same_hardware(here)) {
      spdlog::warn("{} was tuned on '{}'; measuring on '{}'", a->db, base.device.name,
                   here.name);
    }
    namespace fs = std::filesystem;
    std::string out = a->out;
    if (out.empty()) {
      const fs::path p(a->db);
      out = (p.parent_path() / (p.stem().string() + "-bench.json")).string();
    }
    EvaluatorOptions eo;
    eo.templates_dir = templates_dir(options);
    eo.cache_dir = a->cache_dir;
    eo.measure.warmup_runs = a->warmup;
    eo.measure.min_runs = a->min_runs;
    eo.measure.min_time_ms = a->min_time_ms;
    eo.measure.max_runs = a->max_runs;
    eo.measure.data_seed = a->seed;
    std::map<std::string, std::unique_ptr<DeviceEvaluator>> evaluators;  // by kernel

    Database result;
    result.device = here;
    std::cout << fmt::format("{:<44} {:>11} {:>11} {:>7}  {}\n", "entry", "base GFLOPS",
                             "new GFLOPS", "ratio", "status");
    int failed = 0;
    for (const auto& e : base.entries()) {
      Problem problem = e.key.problem();
      problem.alpha = e.alpha;
      problem.beta = e.beta;
      auto& evaluator = evaluators[e.key.kernel];
      if (!evaluator) evaluator = make_evaluator(e.key.kernel, device, profile, eo);
      const Result r = evaluator->evaluate(problem, e.parameters);
      Provenance found = e.found;
      found.strategy = "bench";
      found.evaluations = 1;
      found.date = iso_utc_now();
      found.gemmtune_version = version();
      DatabaseEntry n = DatabaseEntry::from_result(problem, r, found);
      n.parameters = e.parameters;  // the configuration measured, as the baseline spells it
      result.put(n, true);
      if (!r.ok()) ++failed;
      const std::string ratio =
          r.ok() && e.gflops > 0 ? fmt::format("{:.3f}", r.gflops / e.gflops) : "-";
      std::cout << fmt::format("{:<44} {:>11.1f} {:>11.1f} {:>7}  {}{}\n", e.key.to_string(),
                               e.gflops, r.gflops, ratio, to_string(r.status),
                               r.message.empty() ? "" : " (" + r.message + ")");
    }
    result.save(out);
    std::cout << fmt::format("{}: {} entries measured on {}, {} failed\n", out,
                             result.entries().size(), here.name, failed);
  });
}

}  // namespace gemmtune::cli
