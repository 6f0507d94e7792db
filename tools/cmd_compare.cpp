// SPDX-License-Identifier: Apache-2.0
// gemmtune compare: the regression check of a re-measured database against a baseline.
#include <iostream>

#include <fmt/format.h>
#include <spdlog/spdlog.h>

#include "src/core/error.hpp"
#include "src/core/file_identity.hpp"
#include "src/core/json_util.hpp"
#include "src/db/compare.hpp"
#include "tools/commands.hpp"

namespace gemmtune::cli {

void set_compare_command(CLI::App& app, GlobalOptions& options) {
  auto* cmd = app.add_subcommand(
      "compare", "Compare a database against a baseline; exit 1 on a regression beyond noise");
  struct Args {
    std::string base, now, threshold = "3%", markdown, junit;
    double sigmas = 2.0;
    bool json = false;
    bool other_device = false;
    bool force = false;
  };
  // More standard deviations than this call any slowdown noise.
  constexpr double kMaxNoiseSigmas = 10;
  auto a = std::make_shared<Args>();
  cmd->add_option("BASE", a->base, "Baseline database")->required();
  cmd->add_option("NEW", a->now, "Database to check (e.g. written by gemmtune bench)")->required();
  cmd->add_option("--threshold", a->threshold,
                  "Tolerated slowdown beyond the measured noise (3% or 0.03)")
      ->capture_default_str();
  cmd->add_option("--noise-sigmas", a->sigmas,
                  "Combined standard deviations of the two measurements counted as noise")
      ->capture_default_str()
      ->check(finite_number(0, kMaxNoiseSigmas));
  cmd->add_option("--markdown", a->markdown, "Also write the table as Markdown to this file");
  cmd->add_option("--junit", a->junit, "Also write JUnit XML (one test case per entry)");
  cmd->add_flag("--json", a->json, "Print JSON instead of a table");
  cmd->add_flag("--allow-other-device", a->other_device,
                "Compare databases of different devices (refused otherwise)");
  cmd->add_flag("--force", a->force,
                "Replace a --markdown or --junit file that is a tuned database");
  cmd->callback([a, &options]() {
    // Neither report replaces a database compared (however spelled), the other report, or
    // without --force another database.
    const std::vector<NamedInput> inputs = {{a->base, "BASE"}, {a->now, "NEW"}};
    check_output_not_input(a->markdown, inputs, "--markdown");
    check_output_not_input(a->junit, inputs, "--junit");
    if (!a->markdown.empty() && a->markdown == a->junit) {
      throw invalid_argument("--markdown and --junit name one file: " + a->markdown);
    }
    check_output_not_input(a->junit, {{a->markdown, "--markdown"}}, "--junit");
    if (!a->force) {
      check_not_replacing(a->markdown, "--markdown", kDatabaseFormat, "a tuned database");
      check_not_replacing(a->junit, "--junit", kDatabaseFormat, "a tuned database");
    }
    CompareOptions opts;
    opts.threshold = parse_threshold(a->threshold);
    opts.noise_sigmas = a->sigmas;
    const auto base = Database::load(a->base, templates_dir(options));
    const auto now = Database::load(a->now, templates_dir(options));
    if (const auto differ = device_mismatch(base, now)) {
      if (!a->other_device) {
        throw invalid_argument(a->base + " and " + a->now +
                               " were measured on different devices, " + *differ +
                               ": pass --allow-other-device to compare them anyway");
      }
      spdlog::warn("comparing different devices: {}", *differ);
    } else if (const auto driver = base.device.driver_difference(now.device); !driver.empty()) {
      spdlog::warn("{}: measured with {} ({}'s): a difference may be the driver's", a->now, driver,
                   a->base);
    }
    auto report = compare_databases(base, now, opts);
    report.base_name = a->base;
    report.new_name = a->now;
    if (!a->markdown.empty()) write_file_atomic(a->markdown, to_markdown(report));
    if (!a->junit.empty()) write_file_atomic(a->junit, to_junit(report));
    if (a->json) {
      std::cout << nlohmann::json(report).dump(2) << "\n";
    } else {
      std::cout << to_table(report);
    }
    // Exit code 1 means "the check failed"; the files are written by now.
    if (report.failures() > 0) {
      throw CheckFailed(fmt::format("{} of {} entries regressed or failed", report.failures(),
                                    report.rows.size()));
    }
  });
}

}  // namespace gemmtune::cli
