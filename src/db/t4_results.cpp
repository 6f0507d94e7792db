// SPDX-License-Identifier: Apache-2.0
// T4 results (the auto-tuning community's results format, schema 1.0.0 in Kernel Tuner's
// kernel_tuner/schema/T4): {"schema_version", "results": [...]}, each result a configuration,
// its timings, its invalidity ("correct" or why it failed), its correctness and named
// measurements, and the objectives (the names of the measurements that were optimized).
#include <set>

#include <spdlog/spdlog.h>

#include "src/core/error.hpp"
#include "src/db/export.hpp"
#include "src/db/recording.hpp"
#include "src/db/recording_values.hpp"

namespace gemmtune {

namespace {

constexpr const char* kT4SchemaVersion = "1.0.0";
constexpr const char* kObjective = "time";

// T4's invalidity classes and gemmtune's statuses. Reading takes the first status of a class.
const std::pair<const char*, Status> kInvalidity[] = {
    {"correct", Status::kOk},
    {"constraints", Status::kInvalid},
    {"constraints", Status::kDeviceLimit},
    {"constraints", Status::kUnsupported},
    {"compile", Status::kCompileFailed},
    {"runtime", Status::kRunFailed},
    {"runtime", Status::kCrashed},
    {"correctness", Status::kWrongResult},
    {"timeout", Status::kTimeout},
};

std::string invalidity(Status s) {
  for (const auto& [name, status] : kInvalidity) {
    if (status == s) return name;
  }
  throw Error(ErrorCode::kInternal, "no T4 invalidity for status " + to_string(s));
}

// Milliseconds per unit of a time measurement.
double ms_per_unit(const std::string& unit, const std::string& where) {
  const std::pair<const char*, double> kUnits[] = {
      {"", 1}, {"ms", 1}, {"s", 1e3}, {"us", 1e-3}, {"ns", 1e-6}};
  for (const auto& [name, factor] : kUnits) {
    if (unit == name) return factor;
  }
  throw Error(ErrorCode::kInvalidFile,
              where + ": time unit \"" + unit + "\" is not s, ms, us or ns");
}

using recording::Figure;
using recording::string_field;

// The measurement called `name` of a result (`where` names the result), or null.
const nlohmann::ordered_json* measurement(const nlohmann::ordered_json& item,
                                          const std::string& name, const std::string& where) {
  const auto m = item.find("measurements");
  if (m == item.end() || !m->is_array()) return nullptr;
  for (size_t i = 0; i < m->size(); ++i) {
    const auto& x = (*m)[i];
    const std::string at = where + ": measurements[" + std::to_string(i) + "]";
    if (x.is_object() && string_field(x, "name", "", at) == name) return &x;
  }
  return nullptr;
}

Result t4_result(const nlohmann::ordered_json& item, const Configuration& config,
                 const std::string& where) {
  const std::string cls = string_field(item, "invalidity", "", where);
  const std::string times_at = where + ": times";
  const auto times = recording::object_field(item, "times", where);
  // T4 names it compilation_time; Kernel Tuner's T4 output, compilation.
  const double compile_ms = recording::number_field(
      times, "compilation_time",
      recording::number_field(times, "compilation", 0, Figure::kNonNegative, times_at),
      Figure::kNonNegative, times_at);
  if (cls != "correct") {
    for (const auto& [name, status] : kInvalidity) {
      if (cls != name) continue;
      Result r = Result::failure(config, status, "T4 invalidity: " + cls);
      r.compile_ms = compile_ms;
      return r;
    }
    throw Error(ErrorCode::kInvalidFile, where + ": invalidity \"" + cls +
                                             "\" is not one of "
                                             "timeout, compile, runtime, correctness, "
                                             "constraints, correct");
  }
  const auto* time = measurement(item, kObjective, where);
  const auto value =
      time ? time->value("value", nlohmann::ordered_json()) : nlohmann::ordered_json();
  if (!value.is_number() || value.get<double>() <= 0) {
    throw Error(ErrorCode::kInvalidFile,
                where + ": a correct result needs a measurement \"time\" with a positive value");
  }
  const double scale = ms_per_unit(string_field(*time, "unit", "", where), where);
  std::vector<double> runs = recording::durations(times.value("runtimes", nlohmann::ordered_json()),
                                                  times_at + ".runtimes");
  for (double& r : runs) r *= scale;
  const auto* gflops = measurement(item, "GFLOP/s", where);
  const double rate = gflops ? recording::number_field(*gflops, "value", 0, Figure::kNonNegative,
                                                       where + ": measurement \"GFLOP/s\"")
                             : 0.0;
  return recording::measured_result(config, value.get<double>() * scale, runs, rate, compile_ms);
}

// Each parameter's values in order of first appearance: the coder's lists.
std::map<std::string, std::vector<nlohmann::ordered_json>> parameter_values(
    const nlohmann::ordered_json& results) {
  std::map<std::string, std::vector<nlohmann::ordered_json>> values;
  for (const auto& item : results) {
    if (!item.is_object() || !item.contains("configuration")) continue;
    for (const auto& [name, v] : item["configuration"].items()) {
      auto& list = values[name];
      if (std::find(list.begin(), list.end(), v) == list.end()) list.push_back(v);
    }
  }
  return values;
}

}  // namespace

Journal t4_results_journal(const std::string& path, const nlohmann::ordered_json& doc) {
  const auto& results = doc.at("results");
  if (!results.is_array()) throw invalid_file(path, "\"results\" is not an array");
  const recording::ValueCoder coder(parameter_values(results));
  Journal j;
  j.path = path;
  j.headers.push_back(
      {{"type", "header"}, {"source", "t4"}, {"schema_version", doc.at("schema_version")}});
  std::set<std::string> warnings, notes;
  for (size_t i = 0; i < results.size(); ++i) {
    const auto& item = results[i];
    const std::string where = path + ": results[" + std::to_string(i) + "]";
    if (!item.is_object() || !item.contains("configuration") || !item.contains("invalidity") ||
        !item["configuration"].is_object()) {
      throw Error(ErrorCode::kInvalidFile,
                  where + " needs a \"configuration\" object and an \"invalidity\"");
    }
    Configuration config;
    for (const auto& [name, v] : item["configuration"].items()) {
      config[name] = coder.code(name, v, where);
    }
    Problem problem;
    const auto* kernel = measurement(item, "kernel", where);
    const std::string kernel_name =
        kernel ? string_field(*kernel, "value", "", where + ": measurement \"kernel\"") : "";
    const auto* size = measurement(item, "problem_size", where);
    recording::ReadNotes shape_notes;
    problem.shape = recording::shape_from_size(
        size ? size->value("value", nlohmann::ordered_json()) : nlohmann::ordered_json(), 0,
        shape_notes);
    warnings.insert(shape_notes.warnings.begin(), shape_notes.warnings.end());
    notes.insert(shape_notes.notes.begin(), shape_notes.notes.end());
    j.entries.push_back({kernel_name, problem, t4_result(item, config, where), 0});
  }
  for (const auto& w : warnings) spdlog::warn("{}: {}", path, w);
  for (const auto& n : notes) spdlog::info("{}: {}", path, n);
  for (const auto& name : coder.coded()) {
    spdlog::info(
        "{}: parameter {} takes values that are not whole numbers; replayed as their "
        "positions in order of appearance",
        path, name);
  }
  if (j.entries.empty()) throw invalid_file(path, "holds no result");
  return j;
}

std::vector<T4Record> t4_records(const Journal& journal) {
  std::vector<T4Record> out;
  for (const auto& e : journal.entries) out.push_back({e.kernel, e.problem, e.result, ""});
  return out;
}

nlohmann::ordered_json t4_results(const std::vector<T4Record>& records) {
  nlohmann::ordered_json results = nlohmann::ordered_json::array();
  for (const auto& rec : records) {
    const Result& r = rec.result;
    nlohmann::ordered_json item;
    if (!rec.timestamp.empty()) item["timestamp"] = rec.timestamp;
    item["configuration"] = nlohmann::ordered_json::object();
    for (const auto& [name, value] : r.config) item["configuration"][name] = value;
    item["times"] = {{"compilation_time", r.compile_ms}};
    item["invalidity"] = invalidity(r.status);
    // T4's correctness is a score; gemmtune checks every result against a reference, so a
    // result that ran and matched is 1 and every other 0 (it failed or was never checked).
    item["correctness"] = r.ok() ? 1 : 0;
    nlohmann::ordered_json m = nlohmann::ordered_json::array();
    if (r.ok()) {
      m.push_back({{"name", kObjective}, {"value", r.time.median_ms}, {"unit", "ms"}});
      m.push_back({{"name", "GFLOP/s"}, {"value", r.gflops}, {"unit", "GFLOP/s"}});
    } else {
      m.push_back({{"name", "error"}, {"value", r.message}, {"unit", ""}});
    }
    const Shape& s = rec.problem.shape;
    m.push_back({{"name", "kernel"}, {"value", rec.kernel}, {"unit", ""}});
    m.push_back({{"name", "problem_size"}, {"value", {s.m, s.n, s.k}}, {"unit", ""}});
    item["measurements"] = m;
    item["objectives"] = {kObjective};
    results.push_back(item);
  }
  return {{"schema_version", kT4SchemaVersion}, {"results", results}};
}

// Each entry's configuration as one T4 result, its problem in the measurements.
std::vector<T4Record> t4_records(const Database& db) {
  std::vector<T4Record> records;
  for (const auto& e : db.entries()) {
    Problem problem = e.key.problem();
    problem.alpha = e.alpha;
    problem.beta = e.beta;
    Result r;
    r.config = e.parameters;
    r.status = e.status;
    r.message = e.message;
    r.time = e.time;
    r.gflops = e.gflops;
    records.push_back({e.key.kernel, problem, r, e.found.date});
  }
  return records;
}

ExportResult export_t4(const std::vector<T4Record>& records) {
  ExportResult out;
  out.files.push_back({"t4_results.json", t4_results(records).dump(2) + "\n"});
  return out;
}

}  // namespace gemmtune
