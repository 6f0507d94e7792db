// SPDX-License-Identifier: Apache-2.0
#include "search/tuning/search_checks.hpp"

#include <algorithm>
#include <cstdint>
#include <filesystem>
#include <map>
#include <set>

#include <fmt/format.h>

#include "src/core/error.hpp"
#include "src/core/json_util.hpp"
#include "src/core/problem.hpp"

namespace gemmtune {

void check_search_outputs(const std::string& output, const std::string& db_path,
                          const DatabaseDevice& device, const std::string& templates_dir) {
  namespace fs = std::filesystem;
  check_writable_file(output);
  if (db_path.empty()) return;
  check_database_target(db_path, device, templates_dir);
  // The report is written beside the database as <stem>-report.md and .json.
  const fs::path dir = fs::path(db_path).parent_path();
  const std::string stem = fs::path(db_path).stem().string();
  check_writable_file((dir / (stem + "-report.md")).string());
  check_writable_file((dir / (stem + "-report.json")).string());
}

namespace {

// The settings that define a problem besides its shape, in one comparable form.
nlohmann::json family_of(const nlohmann::json& s) {
  nlohmann::json f = nlohmann::json::object();
  for (const char* key :
       {"kernel", "layout", "order", "batch", "batch_layout", "epilogue", "alpha", "beta"}) {
    if (s.contains(key)) f[key] = s[key];
  }
  // "32" and "fp32"-like spellings of one precision are one precision.
  if (s.contains("precision") && s["precision"].is_string()) {
    try {
      f["precision"] = to_string(parse_precision(s["precision"].get<std::string>()));
    } catch (const std::exception&) {
      f["precision"] = s["precision"];
    }
  }
  // "col" and "col-major"-like spellings of one order are one order (journals written before the
  // settings were recorded by their canonical names keep the spelling given).
  if (s.contains("order") && s["order"].is_string()) {
    try {
      f["order"] = parse_order(s["order"].get<std::string>()) == Order::kRowMajor ? "row" : "col";
    } catch (const std::exception&) {
      f["order"] = s["order"];
    }
  }
  // A batch of one has no layout.
  const auto batch = f.find("batch");
  if (batch == f.end() || !batch->is_number_integer() || batch->get<int64_t>() <= 1) {
    f.erase("batch_layout");
  }
  return f;
}

std::set<std::string> shapes_of(const nlohmann::json& s) {
  std::set<std::string> out;
  if (!s.contains("shapes") || !s["shapes"].is_array()) return out;
  for (const auto& sh : s["shapes"]) {
    if (sh.is_string()) out.insert(sh.get<std::string>());
  }
  return out;
}

std::string value_text(const nlohmann::json& v) {
  return v.is_string() ? v.get<std::string>() : v.dump();
}

}  // namespace

std::vector<std::string> problems_not_in_journal(const Journal& journal,
                                                 const nlohmann::json& settings) {
  // Per problem family, the shapes the journal's runs searched.
  std::map<std::string, std::set<std::string>> searched;
  nlohmann::json first_family;
  for (size_t i = 0; i < journal.headers.size(); ++i) {
    const auto settings_of_run = journal.header(i).optional_object("settings");
    if (!settings_of_run || settings_of_run->value().empty()) {
      return {};  // an older header: nothing to compare with
    }
    const nlohmann::json& s = settings_of_run->value();
    const auto family = family_of(s);
    if (first_family.is_null()) first_family = family;
    const auto shapes = shapes_of(s);
    searched[family.dump()].insert(shapes.begin(), shapes.end());
  }
  if (searched.empty()) return {};
  std::vector<std::string> missing;
  const auto family = family_of(settings);
  const auto it = searched.find(family.dump());
  if (it == searched.end()) {
    // Name what differs from the journal's first run.
    for (const auto& [key, value] : family.items()) {
      const auto theirs = first_family.contains(key) ? first_family[key] : nlohmann::json();
      if (theirs != value) {
        missing.push_back(fmt::format("{} {} (the journal's is {})", key, value_text(value),
                                      theirs.is_null() ? "unset" : value_text(theirs)));
      }
    }
    if (missing.empty()) missing.push_back("other problem settings than the journal's");
    return missing;
  }
  std::string recorded;
  for (const auto& s : it->second) recorded += (recorded.empty() ? "" : ", ") + s;
  for (const auto& shape : shapes_of(settings)) {
    if (!it->second.count(shape)) {
      missing.push_back(fmt::format("shape {} (the journal's: {})", shape, recorded));
    }
  }
  return missing;
}

void check_resume_problems(const std::string& path, const Journal& journal,
                           const nlohmann::json& settings) {
  const auto missing = problems_not_in_journal(journal, settings);
  if (missing.empty()) return;
  std::string list;
  for (const auto& m : missing) list += (list.empty() ? "" : "; ") + m;
  throw invalid_argument("--resume " + path + " asks for problems the journal does not hold: " +
                         list + " (pass --new-problems to add them to this journal)");
}

void check_index_range(const Problem& p) {
  const Shape& s = p.shape;
  // A batch lies in one buffer per operand, one matrix apart plus the gaps between them.
  const int64_t entries = p.batch == 1 ? 1 : p.batch + 1;
  for (const auto& [rows, cols] : {std::pair{s.m, s.k}, std::pair{s.k, s.n}, std::pair{s.m, s.n}}) {
    int64_t elements = 0;
    if (__builtin_mul_overflow(rows, cols, &elements) ||
        __builtin_mul_overflow(elements, entries, &elements) || elements > INT32_MAX) {
      throw invalid_argument(fmt::format(
          "problem {}{} has matrices of more than 2^31 elements, beyond the kernels' 32-bit "
          "indices",
          s.to_string(), p.batch == 1 ? std::string() : fmt::format(" (batch {})", p.batch)));
    }
  }
}

void check_fits_device(const Problem& problem, const nlohmann::json& device) {
  if (!device.is_object()) return;
  auto bytes = [&](const char* key) {
    const auto it = device.find(key);
    return it != device.end() && it->is_number_unsigned() ? it->get<uint64_t>() : uint64_t{0};
  };
  const auto name = device.find("name");
  check_fits_device(problem, bytes("global_mem_bytes"), bytes("max_alloc_bytes"),
                    name != device.end() && name->is_string() ? name->get<std::string>()
                                                              : std::string("the device"));
}

void require_valid_result(const Problem& problem, const TuneOutcome& outcome,
                          const std::string& journal) {
  if (outcome.best) return;
  throw Error(ErrorCode::kCheckFailed,
              fmt::format("no valid configuration for {}: {} of {} evaluations failed (each "
                          "failure is in the journal {})",
                          problem.shape.to_string(), outcome.failed, outcome.evaluations, journal));
}

std::optional<std::string> partial_recording(const Journal& journal) {
  // An exhaustive run with --max-evals covered its space when it stopped short of the limit.
  std::map<std::string, int64_t> per_problem;
  int64_t most = 0;
  for (const auto& e : journal.entries) most = std::max(most, ++per_problem[problem_key(e)]);
  for (size_t i = 0; i < journal.headers.size(); ++i) {
    const auto settings = journal.header(i).optional_object("settings");
    if (!settings) continue;
    const JsonReader& s = *settings;
    const std::string strategy = s.string_or("strategy", "");
    if (!strategy.empty() && strategy != "exhaustive") {
      const int64_t evals = s.integer_or("max_evals", 0);
      return evals > 0 ? fmt::format("a {} search of at most {} evaluations", strategy, evals)
                       : fmt::format("a {} search", strategy);
    }
    const double fraction = s.number_or("space_fraction", 0.0);
    const int64_t max_evals = s.integer_or("max_evals", 0);
    if ((max_evals > 0 && most >= max_evals) || s.number_or("time_budget_s", 0.0) > 0 ||
        (fraction > 0 && fraction < 1)) {
      return std::string(
          "an exhaustive search cut short by a budget (--max-evals, --time-budget "
          "or --space-fraction)");
    }
  }
  return std::nullopt;
}

}  // namespace gemmtune
