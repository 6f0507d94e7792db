// gemmtune db: inspect, merge and query tuned databases.
#include <iostream>

#include <fmt/format.h>

#include "src/core/error.hpp"
#include "src/db/database.hpp"
#include "tools/commands.hpp"

namespace gemmtune::cli {

namespace {

void print_entries(const Database& db) {
  std::cout << fmt::format("device   {} ({}, profile {})\n", db.device.name, db.device.vendor,
                           db.device.profile);
  std::cout << fmt::format("driver   {}  {}\n", db.device.driver_version, db.device.opencl_version);
  std::cout << fmt::format("updated  {} by gemmtune {}\n", db.metadata.updated,
                           db.metadata.gemmtune_version);
  std::cout << fmt::format("entries  {}\n\n", db.entries().size());
  if (db.entries().empty()) return;
  std::cout << fmt::format(
      "{:<16} {:>7} {:>4} {:>3} {:>12} {:>16} {:>10} {:>10} {:>6} {:>9} {:<12} {}\n", "kernel",
      "prec", "ord", "op", "batch", "MxNxK", "GFLOPS", "median ms", "cv %", "error", "found by",
      "parameters");
  for (const auto& e : db.entries()) {
    const auto& k = e.key;
    std::string gflops =
        e.status == Status::kOk ? fmt::format("{:.1f}", e.gflops) : to_string(e.status);
    std::cout << fmt::format(
        "{:<16} {:>7} {:>4} {:>3} {:>12} {:>16} {:>10} {:>10.4f} {:>6.2f} {:>9.2e} {:<12} {}\n",
        k.kernel, "fp" + to_string(k.precision), k.order == Order::kRowMajor ? "row" : "col",
        k.layout,
        // A batch names where its matrices lie: two entries may differ only there.
        k.batch > 1 ? std::to_string(k.batch) + " " + to_string(k.batch_layout)
                    : std::to_string(k.batch),
        k.shape.to_string(), gflops, e.time.median_ms, e.time.cv * 100, e.max_error,
        e.found.strategy, to_string(e.parameters));
  }
}

void set_show(CLI::App& db_cmd, const GlobalOptions& options) {
  auto* cmd = db_cmd.add_subcommand("show", "Print the entries of a tuned database");
  auto path = std::make_shared<std::string>();
  auto json = std::make_shared<bool>(false);
  cmd->add_option("DB", *path, "Database file")->required();
  cmd->add_flag("--json", *json, "Print the database as JSON");
  cmd->callback([path, json, &options]() {
    const auto db = Database::load(*path, templates_dir(options));
    if (*json) {
      std::cout << db.to_json().dump(2) << "\n";
    } else {
      print_entries(db);
    }
  });
}

void set_merge(CLI::App& db_cmd, const GlobalOptions& options) {
  auto* cmd = db_cmd.add_subcommand(
      "merge",
      "Merge databases of one device, keeping the fastest entry of each problem (an existing OUT "
      "is merged too; searches writing OUT meanwhile wait for its lock)");
  auto out = std::make_shared<std::string>();
  auto inputs = std::make_shared<std::vector<std::string>>();
  cmd->add_option("OUT", *out, "Database to write (may be one of the inputs)")->required();
  cmd->add_option("IN", *inputs, "Databases to merge")->required();
  cmd->callback([out, inputs, &options]() {
    const auto s = merge_database_files(*out, *inputs, templates_dir(options));
    std::cout << fmt::format("{}: {} entries from {} entries in {} databases{}\n", *out, s.entries,
                             s.input_entries, s.databases,
                             s.kept_output ? " (its own entries included)" : "");
  });
}

void set_lookup(CLI::App& db_cmd, const GlobalOptions& options) {
  auto* cmd = db_cmd.add_subcommand(
      "lookup", "Find the tuned parameters of a problem: the exact shape, else the nearest one");
  struct Args {
    std::string path, kernel = "xgemm";
    ProblemOptions problem;
    bool json = false;
  };
  auto a = std::make_shared<Args>();
  cmd->add_option("DB", a->path, "Database file")->required();
  cmd->add_option("--kernel", a->kernel, "Kernel template")->capture_default_str();
  add_problem_options(*cmd, a->problem, kPrecision | kLayoutOrder | kBatch | kEpilogue | kMnk);
  for (const char* dim : {"m", "n", "k"}) a->problem.added.at(dim)->required();
  cmd->add_flag("--json", a->json, "Print JSON");
  cmd->callback([a, &options]() {
    Problem problem = a->problem.problem(a->kernel);
    problem.shape = *a->problem.one_shape();
    const EntryKey key = EntryKey::of(problem);
    const auto db = Database::load(a->path, templates_dir(options));
    const auto match = db.nearest(key);
    if (!match.entry) {
      throw invalid_argument(a->path + " has no entry for " + key.kernel + " fp" +
                             to_string(key.precision) + " " + a->problem.order + " " + key.layout +
                             " batch " + std::to_string(key.batch) +
                             (key.batch > 1 ? " " + to_string(key.batch_layout) : std::string()) +
                             (key.epilogue.empty() ? "" : " epilogue " + key.epilogue));
    }
    const auto& e = *match.entry;
    if (a->json) {
      nlohmann::json out = {{"requested", key},
                            {"match", match.exact ? "exact" : "nearest"},
                            {"log_distance", match.distance},
                            {"entry", e}};
      std::cout << out.dump(2) << "\n";
      return;
    }
    if (match.exact) {
      std::cout << fmt::format("exact match {}\n", e.key.to_string());
    } else {
      std::cout << fmt::format(
          "no entry for {}; nearest tuned shape is {} (log-space distance {:.3f})\n",
          key.shape.to_string(), e.key.shape.to_string(), match.distance);
    }
    std::cout << fmt::format("{:.1f} GFLOPS, median {:.4f} ms\n", e.gflops, e.time.median_ms);
    std::cout << to_string(e.parameters) << "\n";
  });
}

}  // namespace

void set_db_command(CLI::App& app, GlobalOptions& options) {
  auto* cmd = app.add_subcommand("db", "Inspect, merge and query tuned databases");
  cmd->require_subcommand(1);
  set_show(*cmd, options);
  set_merge(*cmd, options);
  set_lookup(*cmd, options);
}

}  // namespace gemmtune::cli
