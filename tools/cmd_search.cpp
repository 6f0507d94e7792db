// SPDX-License-Identifier: Apache-2.0
// gemmtune search: explores a kernel's parameter space on a device (or a recorded replay) and keeps
// the fastest verified configuration for each requested shape. Every evaluation is journalled at
// once; --resume continues an interrupted search without measuring anything twice.
//
// This file hands the options (search_options.cpp) to the search job (search/job) and prints what
// the job reports.
#include <filesystem>
#include <iostream>

#include <fmt/format.h>

#include "src/core/error.hpp"
#include "src/core/file_identity.hpp"
#include "tools/commands.hpp"
#include "tools/search_command.hpp"

namespace gemmtune::cli {

namespace {

std::string self_executable() {
  std::error_code ec;
  auto p = std::filesystem::read_symlink("/proc/self/exe", ec);
  if (ec) throw Error(ErrorCode::kInternal, "cannot locate the gemmtune executable");
  return p.string();
}

void print_summary(const std::vector<ShapeOutcome>& outcomes) {
  std::cout << fmt::format("{:<20} {:>7} {:>7} {:>7} {:>7} {:>10} {:>10} {:>9}  {}\n", "shape",
                           "evals", "failed", "resumed", "cached", "GFLOPS", "ms", "evals/min",
                           "best configuration");
  for (const auto& o : outcomes) {
    const auto& t = o.outcome;
    std::cout << fmt::format("{:<20} {:>7} {:>7} {:>7} {:>7} {:>10} {:>10} {:>9.1f}  {}\n",
                             o.problem.shape.to_string(), t.evaluations, t.failed, t.resumed,
                             t.cached, t.best ? fmt::format("{:.2f}", t.best->gflops) : "-",
                             t.best ? fmt::format("{:.4f}", t.best->time.median_ms) : "-",
                             t.evaluations_per_minute(),
                             t.best ? to_string(t.best->config) : "(no valid configuration)");
  }
}

void print_written(const SearchWritten& w, bool json) {
  if (json) {
    std::cout << w.results.dump(2) << "\n";
    return;
  }
  print_summary(w.outcomes);
  // Measured counts every result (a configuration the device refuses at launch too); verified
  // only those that ran and matched the reference.
  std::cout << fmt::format(
      "{} configurations measured in {:.1f} s: {:.1f} per minute; {} verified: {:.1f} per "
      "minute\n",
      w.measured, w.elapsed_s, w.per_minute, w.verified, w.verified_per_minute);
  if (w.siblings > 0) {
    std::cout << fmt::format(
        "Of them {} runtime siblings of measured configurations (no build of their own), measured "
        "while a build was under way\n",
        w.siblings);
  }
  const SearchTimeSplit& t = w.time;
  const double device = t.timing_s + t.other_evaluation_s + t.proposal_wait_s;
  if (device > 0) {
    std::cout << fmt::format(
        "Device time: {:.0f}% timing, {:.0f}% waiting for builds, {:.0f}% program loads, "
        "verification and "
        "transfers, {:.0f}% waiting for proposals; the strategy busy {:.1f} s of {:.1f}; bounded "
        "by {}\n",
        100 * t.timing_s / device, 100 * t.build_wait_s / device, 100 * t.checking_s / device,
        100 * t.proposal_wait_s / device, t.strategy_s, w.elapsed_s, t.bound);
  }
  std::cout << "Results written to " << w.output << " (journal " << w.journal << ")\n";
  if (!w.database.empty()) {
    std::cout << "Tuned database: " << w.database << "\nReport: " << w.report << "\n";
  }
}

void print_fastest(const FastestTemplate& f) {
  std::string all;
  for (const auto& [kernel, gflops] : f.gflops) {
    all += fmt::format("{}{} {}", all.empty() ? "" : ", ", kernel,
                       gflops ? fmt::format("{:.1f}", *gflops) : std::string("-"));
  }
  std::cout << fmt::format("{}: fastest template {} (GFLOPS: {})\n", f.shape.to_string(), f.kernel,
                           all);
}

void run_search_command(const GlobalOptions& global, const SearchArgs& a,
                        const GivenOptions& given) {
  // The shapes file is read here, before the job: the results file must not replace it.
  check_output_not_input(a.job.output, {{a.problem.shapes_file, "--shapes-file"}}, "-o/--output");
  SearchJobOptions job = a.job;
  job.problem = a.problem.problem();
  job.shapes = a.problem.shape_list();
  for (const auto& [name, option] : given) {
    if (option->count() > 0) job.given.insert(name);
  }
  job.eval.templates_dir = global.templates_dir;
  job.devices_dir = global.devices_dir;
  // Helper processes (the worker, compile workers) run this same binary with the global options
  // of this command line.
  job.helper_command = {self_executable()};
  for (auto& arg : global_arguments(global)) job.helper_command.push_back(std::move(arg));
  SearchJobReports reports;
  reports.written = [json = a.json](const SearchWritten& w) { print_written(w, json); };
  reports.fastest = print_fastest;
  run_search_job(std::move(job), reports);
}

}  // namespace

void set_search_command(CLI::App& app, GlobalOptions& options) {
  auto a = std::make_shared<SearchArgs>();
  auto given = std::make_shared<GivenOptions>();
  auto* cmd = app.add_subcommand("search",
                                 "Search a kernel's parameter space for the fastest "
                                 "configuration of each shape");
  add_search_options(*cmd, *a, *given);
  cmd->callback([&options, a, given]() { run_search_command(options, *a, *given); });
}

}  // namespace gemmtune::cli
