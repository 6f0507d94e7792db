// gemmtune report: the bottleneck report of every entry of a tuned database.
#include <filesystem>
#include <iostream>

#include <spdlog/spdlog.h>

#include "src/core/error.hpp"
#include "src/core/json_util.hpp"
#include "src/report/report.hpp"
#include "tools/commands.hpp"

namespace gemmtune::cli {

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
    const auto db = Database::load(a->db, templates_dir(options));
    const auto profiles = load_profiles(options);
    const std::string name = a->profile.empty() ? db.device.profile : a->profile;
    // The model of the database's device where the profile tells models apart.
    const DeviceProfile* profile = profiles.find(name, db.device.name);
    if (!profile && !a->profile.empty()) {
      throw invalid_argument("no device profile named '" + a->profile + "'");
    }
    if (!profile) spdlog::warn("no device profile '{}': device figures are unknown", name);
    const auto report = analyze_database(db, templates_dir(options), profile);
    if (a->out.empty()) {
      if (a->json) {
        std::cout << nlohmann::json(report).dump(2) << "\n";
      } else {
        std::cout << to_markdown(report);
      }
      return;
    }
    namespace fs = std::filesystem;
    std::error_code ec;
    fs::create_directories(a->out, ec);
    const std::string stem = fs::path(a->db).stem().string();
    const std::string md = (fs::path(a->out) / (stem + "-report.md")).string();
    const std::string js = (fs::path(a->out) / (stem + "-report.json")).string();
    write_file_atomic(md, to_markdown(report));
    write_json_atomic(js, nlohmann::json(report));
    std::cout << md << "\n" << js << "\n";
  });
}

}  // namespace gemmtune::cli
