// SPDX-License-Identifier: Apache-2.0
// gemmtune bench: re-measures every entry of a database on the current device and writes a new
// database of the same problems (the input of gemmtune compare).
#include <filesystem>
#include <iostream>
#include <map>
#include <memory>

#include <fmt/format.h>
#include <spdlog/spdlog.h>

#include "src/core/error.hpp"
#include "src/core/file_identity.hpp"
#include "src/core/version.hpp"
#include "src/db/database.hpp"
#include "src/eval/evaluator_factory.hpp"
#include "src/kernel/kernel_spec.hpp"
#include "tools/commands.hpp"

namespace gemmtune::cli {

void set_bench_command(CLI::App& app, GlobalOptions& options) {
  auto* cmd = app.add_subcommand(
      "bench", "Re-measure every entry of a database on this device into a new database");
  struct Args {
    std::string db, out, device;
    EvaluatorOptions eval;
  };
  auto a = std::make_shared<Args>();
  // A regression check wants steadier figures than a search: more runs, more time.
  a->eval.measure.min_runs = 5;
  a->eval.measure.min_time_ms = 50.0;
  cmd->add_option("DB", a->db, "Database to re-measure")->required();
  cmd->add_option("-o,--output", a->out, "Database to write (default: <DB>-bench.json)");
  add_device_option(*cmd, a->device);
  // --cache and --data-seed were this command's spellings before the shared group.
  add_measure_options(*cmd, a->eval, kTiming | kDataSeed | kCacheDir,
                      MeasureSpelling{"--cache-dir,--cache", "--seed,--data-seed"});
  cmd->callback([a, &options]() {
    // Before any measurement: the new database never replaces the one re-measured.
    check_output_not_input(a->out, {{a->db, "DB"}}, "-o/--output");
    const auto base = Database::load(a->db);
    const auto profiles = load_profiles(options);
    const Device device = select_device(a->device, &profiles);
    const DeviceProfile* profile = profiles.match(device.info);
    const auto here = DatabaseDevice::from(device.info);
    if (!base.device.same_hardware(here)) {
      spdlog::warn("{} was tuned on '{}'; measuring on '{}'", a->db, base.device.name, here.name);
    }
    namespace fs = std::filesystem;
    std::string out = a->out;
    if (out.empty()) {
      const fs::path p(a->db);
      out = (p.parent_path() / (p.stem().string() + "-bench.json")).string();
    }
    const EvaluatorOptions eo = evaluator_options(options, a->eval);
    std::map<std::string, std::unique_ptr<DeviceEvaluator>> evaluators;  // by kernel
    std::map<std::string, KernelSpec> specs;                             // by kernel

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
      auto spec = specs.find(e.key.kernel);
      if (spec == specs.end()) {
        spec =
            specs
                .emplace(e.key.kernel, KernelSpec::load_named(templates_dir(options), e.key.kernel))
                .first;
      }
      // An entry written before a parameter existed runs with that parameter's default, as the
      // library runs it; a parameter the template no longer has makes the entry stale.
      Result r;
      try {
        r = evaluator->evaluate(problem, spec->second.complete(e.parameters));
      } catch (const std::exception& ex) {
        r.status = Status::kInvalid;
        r.message = std::string("stale: ") + ex.what();
      }
      Provenance found = e.found;
      found.strategy = "bench";
      found.evaluations = 1;
      found.date = iso_utc_now();
      found.gemmtune_version = version();
      DatabaseEntry n = DatabaseEntry::from_result(e.key.kernel, problem, r, found);
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
