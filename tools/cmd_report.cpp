// SPDX-License-Identifier: Apache-2.0
// gemmtune report: the bottleneck report of every entry of a tuned database.
#include <filesystem>
#include <iostream>

#include <spdlog/spdlog.h>

#include "src/core/error.hpp"
#include "src/core/file_identity.hpp"
#include "src/core/json_util.hpp"
#include "src/offline/amd_offline.hpp"
#include "src/report/report.hpp"
#include "tools/commands.hpp"

namespace gemmtune::cli {

namespace {

// An AMD database's entries without real counts (tuned where the driver gave none) take them from
// the offline AMD build, where the compiler is installed: the report then judges real VGPRs,
// spills and occupancy instead of the template's estimates.
Database with_offline_resources(const Database& db, const DeviceProfile& profile,
                                const std::string& templates) {
  if (!is_amdgpu_isa(profile.name)) return db;
  std::optional<AmdOfflineCompiler> compiler;
  try {
    compiler.emplace(AmdToolchain::find(), templates, "");
  } catch (const Error& e) {
    spdlog::warn("registers are estimates: {}", e.what());
    return db;
  }
  Database out = db;
  for (DatabaseEntry entry : db.entries()) {
    if (entry.usage.registers) continue;  // the driver's own figures stay
    try {
      const auto spec = KernelSpec::load_named(templates, entry.key.kernel);
      if (spec.source_file().empty()) continue;  // another library's kernel (CLBlast)
      entry.usage = compiler->build(spec, entry.key.problem(), entry.parameters, {&profile, 0}).usage();
      out.put(entry, true);
    } catch (const Error& e) {
      spdlog::warn("{}: no offline build ({})", entry.key.to_string(), e.what());
    }
  }
  return out;
}

}  // namespace

void set_report_command(CLI::App& app, GlobalOptions& options) {
  auto* cmd = app.add_subcommand(
      "report", "Bottleneck report (Markdown and JSON) of each entry of a tuned database");
  struct Args {
    std::string db, out, profile;
    bool json = false;
  };
  auto a = std::make_shared<Args>();
  cmd->add_option("DB", a->db, "Database file")->required();
  cmd->add_option("-o,--output", a->out,
                  "Folder to write <name>-report.md and <name>-report.json into (default: "
                  "Markdown on stdout)");
  cmd->add_option("--profile", a->profile,
                  "Device profile to judge against (default: the one the database names)");
  cmd->add_flag("--json", a->json, "Print JSON instead of Markdown on stdout");
  cmd->callback([a, &options]() {
    namespace fs = std::filesystem;
    const std::string stem = fs::path(a->db).stem().string();
    const std::string md = (fs::path(a->out) / (stem + "-report.md")).string();
    const std::string js = (fs::path(a->out) / (stem + "-report.json")).string();
    if (!a->out.empty()) {
      check_output_not_input(md, {{a->db, "DB"}}, "-o/--output");
      check_output_not_input(js, {{a->db, "DB"}}, "-o/--output");
    }
    const auto db = Database::load(a->db, templates_dir(options));
    const auto profiles = load_profiles(options);
    const std::string name = a->profile.empty() ? db.device.profile : a->profile;
    // The model of the database's device where the profile tells models apart.
    const DeviceProfile* profile = profiles.find(name, db.device.name);
    if (!profile && !a->profile.empty()) {
      throw invalid_argument("no device profile named '" + a->profile + "'");
    }
    if (!profile) spdlog::warn("no device profile '{}': device figures are unknown", name);
    const auto report = analyze_database(
        profile ? with_offline_resources(db, *profile, templates_dir(options)) : db,
        templates_dir(options), profile);
    if (a->out.empty()) {
      if (a->json) {
        std::cout << nlohmann::json(report).dump(2) << "\n";
      } else {
        std::cout << to_markdown(report);
      }
      return;
    }
    std::error_code ec;
    fs::create_directories(a->out, ec);
    write_file_atomic(md, to_markdown(report));
    write_json_atomic(js, nlohmann::json(report));
    std::cout << md << "\n" << js << "\n";
  });
}

}  // namespace gemmtune::cli
