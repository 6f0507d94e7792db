// SPDX-License-Identifier: Apache-2.0
// gemmtune db: inspect, merge and query tuned databases, and calibrate the selection model that
// answers for shapes a database lacks. show and merge here; lookup in cmd_db_lookup.cpp,
// add-measurements and calibrate in cmd_db_journals.cpp.
#include <iostream>
#include <map>
#include <memory>
#include <optional>
#include <utility>
#include <vector>

#include <fmt/format.h>

#include "src/core/error.hpp"
#include "src/db/database.hpp"
#include "src/db/journal.hpp"
#include "src/kernel/kernel_spec.hpp"
#include "tools/cmd_db.hpp"
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

}  // namespace

SpecLookup template_lookup(const std::string& templates) {
  auto specs = std::make_shared<std::map<std::string, std::optional<KernelSpec>>>();
  return [specs, templates](const std::string& kernel) -> const KernelSpec* {
    auto it = specs->find(kernel);
    if (it == specs->end()) {
      std::optional<KernelSpec> spec;
      try {
        spec = KernelSpec::load_named(templates, kernel);
      } catch (const Error&) {
        // A kernel without a declaration here: its parameters give the tiles.
      }
      it = specs->emplace(kernel, std::move(spec)).first;
    }
    return it->second ? &*it->second : nullptr;
  };
}

DeviceInfo journals_device(const std::vector<std::string>& journals) {
  std::optional<DeviceInfo> device;
  std::string first_id, first_path;
  for (const auto& path : journals) {
    const Journal journal = read_journal(path);
    const auto recorded =
        journal.headers.empty() ? std::nullopt : journal.header(0).optional_object("device");
    if (!recorded || !recorded->has("name")) {
      throw invalid_file(path, "has no header naming the device it was measured on");
    }
    const std::string id = recorded->string_or("id", recorded->string("name"));
    if (!device) {
      device = recorded->convert<DeviceInfo>();
      first_id = id;
      first_path = path;
    } else if (id != first_id) {
      throw invalid_argument("journals of two devices: " + first_path + " (" + first_id + ") and " +
                             path + " (" + id + "); calibrate one device at a time");
    }
  }
  return *device;
}

void set_db_command(CLI::App& app, GlobalOptions& options) {
  auto* cmd = app.add_subcommand("db", "Inspect, merge and query tuned databases");
  cmd->require_subcommand(1);
  set_show(*cmd, options);
  set_merge(*cmd, options);
  set_db_lookup(*cmd, options);
  set_db_calibrate(*cmd, options);
  set_db_add_measurements(*cmd);
}

}  // namespace gemmtune::cli
