// SPDX-License-Identifier: Apache-2.0
// What a search job leaves behind: the results file with its metadata, and the bottleneck report
// (and pictures) beside the tuned database.
#include <algorithm>
#include <cstdlib>
#include <filesystem>

#include <fmt/format.h>
#include <spdlog/spdlog.h>

#include "search/job/job_parts.hpp"
#include "src/core/data_paths.hpp"
#include "src/core/json_util.hpp"
#include "src/core/version.hpp"
#include "src/report/report.hpp"

namespace gemmtune {

namespace {

// Draws the pictures into <stem>-plots beside the database; returns the Markdown that shows
// them, or "" when python3 with matplotlib is missing.
std::string draw_plots(const std::string& db_path, const std::string& journal) {
  namespace fs = std::filesystem;
  const fs::path dir = fs::path(db_path).parent_path();
  const std::string stem = fs::path(db_path).stem().string();
  const fs::path pictures = dir / (stem + "-plots");
  const std::string script = find_data_dir("scripts", "") + "/plot.py";
  // Debian's python3 carries python3-matplotlib; another python3 earlier on PATH may not.
  std::string python = "python3";
  for (const char* candidate : {"python3", "/usr/bin/python3"}) {
    const std::string probe = std::string(candidate) + " -c 'import matplotlib' >/dev/null 2>&1";
    if (std::system(probe.c_str()) == 0) {
      python = candidate;
      break;
    }
  }
  const std::string cmd = python + " " + shell_quote(script) + " all " + shell_quote(journal) +
                          " " + shell_quote(db_path) + " -d " + shell_quote(pictures.string());
  if (std::system(cmd.c_str()) != 0) {
    spdlog::warn("pictures not drawn: `{}` failed (python3 with matplotlib is needed)", cmd);
    return "";
  }
  std::vector<std::string> pngs;
  std::error_code ec;
  for (const auto& e : fs::directory_iterator(pictures, ec)) {
    if (e.path().extension() == ".png") pngs.push_back(e.path().filename().string());
  }
  std::sort(pngs.begin(), pngs.end());
  std::string md = "\n## Pictures\n\n";
  for (const auto& p : pngs) md += "![" + p + "](" + stem + "-plots/" + p + ")\n";
  return md;
}

// Writes <db stem>-report.md/.json beside the database (and the pictures with --plots); returns
// the Markdown report's path.
std::string write_report_beside(const SearchJobOptions& a, const DatabaseTarget& db) {
  namespace fs = std::filesystem;
  const Database loaded = Database::load(db.path);
  const auto profiles = job_profiles(a);
  const DeviceProfile* profile = profiles.find(loaded.device.profile, loaded.device.name);
  const auto report = analyze_database(loaded, a.eval.templates_dir, profile);
  const fs::path dir = fs::path(db.path).parent_path();
  const std::string stem = fs::path(db.path).stem().string();
  std::string md = to_markdown(report);
  if (a.plots) md += draw_plots(db.path, a.journal);
  const std::string md_path = (dir / (stem + "-report.md")).string();
  write_file_atomic(md_path, md);
  write_json_atomic((dir / (stem + "-report.json")).string(), nlohmann::json(report));
  return md_path;
}

nlohmann::json shape_results(const std::string& kernel, const std::vector<ShapeOutcome>& outcomes) {
  nlohmann::json results = nlohmann::json::array();
  for (const auto& o : outcomes) {
    const auto& t = o.outcome;
    results.push_back({{"problem", problem_json(o.problem, kernel)},
                       {"shape", o.problem.shape.to_string()},
                       {"best", t.best ? nlohmann::json(*t.best) : nlohmann::json()},
                       {"space_size", o.space_size},
                       {"evaluations", t.evaluations},
                       {"measured", t.measured},
                       {"resumed", t.resumed},
                       {"cached", t.cached},
                       {"warm_started", t.warm_started},
                       {"runtime_siblings", t.siblings},
                       {"failed", t.failed},
                       {"max_in_flight", t.max_in_flight},
                       {"elapsed_s", t.elapsed_s},
                       {"evaluations_per_minute", t.evaluations_per_minute()},
                       {"stop_reason", t.stop_reason}});
  }
  return results;
}

// The strategy busy this share of the search or more sets the pace where the devices waited.
constexpr double kStrategyBoundShare = 0.9;

}  // namespace

SearchTimeSplit split_search_time(double elapsed_s, double timing_s, double evaluating_s,
                                  double proposal_wait_s, double build_wait_s, double strategy_s) {
  SearchTimeSplit t;
  t.timing_s = timing_s;
  t.other_evaluation_s = std::max(0.0, evaluating_s - timing_s);
  t.build_wait_s = std::min(build_wait_s, t.other_evaluation_s);
  t.checking_s = t.other_evaluation_s - t.build_wait_s;
  t.proposal_wait_s = proposal_wait_s;
  t.strategy_s = strategy_s;
  const std::pair<double, const char*> parts[] = {
      {t.timing_s, "timing"},
      {t.build_wait_s, "builds"},
      {t.checking_s, "program loads, verification and transfers"},
      {t.proposal_wait_s, "proposals"}};
  const auto* most = &parts[0];
  for (const auto& p : parts) {
    if (p.first > most->first) most = &p;
  }
  t.bound = most->second;
  // Waiting devices and a strategy that never rested: its proposals came too slowly to be built
  // in time.
  const bool waited = most == &parts[1] || most == &parts[3];
  if (waited && elapsed_s > 0 && strategy_s >= kStrategyBoundShare * elapsed_s) {
    t.bound = fmt::format(
        "the strategy ({:.0f}% of the search busy proposing; the devices "
        "waited for {})",
        100 * strategy_s / elapsed_s, most->second);
  }
  return t;
}

std::string shell_quote(const std::string& s) {
  if (s.find_first_not_of(
          "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_-./:=,") ==
      std::string::npos) {
    return s;
  }
  std::string out = "'";
  for (char c : s) out += c == '\'' ? std::string("'\\''") : std::string(1, c);
  return out + "'";
}

void write_search_outputs(const SearchJobOptions& a, const SearchTarget& target,
                          const std::vector<ShapeOutcome>& outcomes, bool interrupted,
                          const SearchJobReports& reports) {
  size_t measured = 0, verified = 0, siblings = 0;
  double elapsed = 0, timing = 0, evaluating = 0, waiting = 0, strategy = 0;
  for (const auto& o : outcomes) {
    strategy += o.outcome.strategy_s;
    measured += o.outcome.measured;
    siblings += o.outcome.siblings;
    verified += o.outcome.verified;
    elapsed += o.outcome.elapsed_s;
    timing += o.outcome.timing_s;
    evaluating += o.outcome.evaluating_s;
    waiting += o.outcome.proposal_wait_s;
  }
  const SearchTimeSplit split =
      split_search_time(elapsed, timing, evaluating, waiting,
                        target.pool ? target.pool->stats().wait_s : 0.0, strategy);
  const double per_minute = elapsed > 0 ? 60.0 * double(measured) / elapsed : 0;
  const double verified_per_minute = elapsed > 0 ? 60.0 * double(verified) / elapsed : 0;
  const auto& device_json = target.device_json;
  nlohmann::json out = {
      {"format", "gemmtune-search"},
      {"metadata",
       {{"device", device_json},
        {"driver", device_json.is_object() ? device_json.value("driver_version", "") : ""},
        {"gemmtune_version", version()},
        {"seed", a.seed},
        {"date", iso_utc_now()},
        {"strategy", a.strategy},
        {"strategy_options", a.strategy_options},
        {"kernel", a.kernel},
        {"space", a.space},
        {"evaluator", target.evaluator->description()},
        {"devices", target.device_selectors},
        {"journal", a.journal},
        {"shard", a.shard},
        {"compile_pool", target.pool ? nlohmann::json(target.pool->stats()) : nlohmann::json()},
        {"complete", !interrupted},
        {"evaluations_per_minute", per_minute},
        {"runtime_siblings", siblings},
        {"verified_per_minute", verified_per_minute},
        {"device_time_s",
         {{"timing", split.timing_s},
          {"other_evaluation", split.other_evaluation_s},
          {"build_wait", split.build_wait_s},
          {"loads_verification_transfers", split.checking_s},
          {"proposal_wait", split.proposal_wait_s}}},
        {"strategy_s", split.strategy_s},
        {"bounded_by", split.bound}}},
      {"results", shape_results(a.kernel, outcomes)}};
  if (target.pool) {
    const auto s = target.pool->stats();
    spdlog::info(
        "compile pool: {} built, {} already cached, {} failed, {} reached by the "
        "measurement first, {} waited for ({} processes started{})",
        s.built, s.cached, s.failed, s.taken_back, s.waited, s.starts,
        s.stopped ? "; stopped" : "");
  }
  std::error_code ec;
  const auto parent = std::filesystem::path(a.output).parent_path();
  if (!parent.empty()) std::filesystem::create_directories(parent, ec);
  write_json_atomic(a.output, out);

  const auto& db = target.db;
  const bool have_db = !db.path.empty() && std::filesystem::exists(db.path);
  const std::string report_path = have_db ? write_report_beside(a, db) : "";
  if (reports.written) {
    reports.written(SearchWritten{a.kernel, out, outcomes, a.output, a.journal,
                                  have_db ? db.path : "", report_path, measured, verified, elapsed,
                                  per_minute, verified_per_minute, split, siblings});
  }
  // An interrupted search ends with the resume hint as its error line (search_job.cpp).
}

}  // namespace gemmtune
