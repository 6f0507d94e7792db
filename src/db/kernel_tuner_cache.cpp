// SPDX-License-Identifier: Apache-2.0
// Kernel Tuner cache files as journals. A cache is one JSON object: the kernel, device and problem
// size, the tunable parameters with their values, and "cache", which maps each configuration (its
// values joined by commas) to its record: "time" in milliseconds (or the name of the failure),
// the repetitions "times", "GFLOP/s", "compile_time" and more.
#include <sstream>

#include <spdlog/spdlog.h>

#include "src/core/error.hpp"
#include "src/db/recording.hpp"
#include "src/db/recording_values.hpp"

namespace gemmtune {

namespace {

using recording::Figure;
using recording::number_field;
using recording::string_field;

// Kernel Tuner's names of failed configurations, with the status each means.
const std::pair<const char*, Status> kFailureNames[] = {
    {"InvalidConfig", Status::kInvalid},
    {"CompilationFailedConfig", Status::kCompileFailed},
    {"RuntimeFailedConfig", Status::kRunFailed},
};

// Kernel Tuner reports rates in GFLOP/s and times in milliseconds.
constexpr double kFlopsPerGflopMs = 1e6;

// The floating-point operations of one run, from the first record with both a time and a rate
// (0 when none has them): Kernel Tuner's problem size may name fewer dimensions than a GEMM has.
double recorded_flops(const nlohmann::ordered_json& cache) {
  for (const auto& [key, e] : cache.items()) {
    if (!e.is_object()) continue;
    const auto t = e.find("time"), g = e.find("GFLOP/s");
    if (t != e.end() && g != e.end() && t->is_number() && g->is_number()) {
      return t->get<double>() * g->get<double>() * kFlopsPerGflopMs;
    }
  }
  return 0;
}

// The parameter values of a record: its own fields, else the key's comma-separated values.
nlohmann::ordered_json parameter_value(const nlohmann::ordered_json& record, const std::string& key,
                                       const std::vector<std::string>& names, size_t i,
                                       const std::string& where) {
  if (auto it = record.find(names[i]); it != record.end()) return *it;
  std::vector<std::string> parts;
  std::istringstream in(key);
  std::string part;
  while (std::getline(in, part, ',')) parts.push_back(part);
  if (parts.size() != names.size()) {
    throw Error(ErrorCode::kInvalidFile, where + ": has no field " + names[i] +
                                             " and its key has " + std::to_string(parts.size()) +
                                             " values for " + std::to_string(names.size()) +
                                             " parameters");
  }
  const auto parsed = nlohmann::ordered_json::parse(parts[i], nullptr, false);
  return parsed.is_discarded() ? nlohmann::ordered_json(parts[i]) : parsed;
}

Result cache_result(const nlohmann::ordered_json& record, const Configuration& config,
                    const std::string& where) {
  const auto time = record.find("time");
  if (time == record.end()) throw Error(ErrorCode::kInvalidFile, where + ": has no \"time\"");
  const double compile = number_field(record, "compile_time", 0, Figure::kNonNegative, where);
  if (time->is_string()) {
    const std::string name = time->get<std::string>();
    for (const auto& [failure, status] : kFailureNames) {
      if (name != failure) continue;
      Result r = Result::failure(config, status, "Kernel Tuner: " + name);
      r.compile_ms = compile;
      return r;
    }
    throw Error(ErrorCode::kInvalidFile,
                where + ": \"time\" is \"" + name +
                    "\", neither a number nor InvalidConfig, CompilationFailedConfig or "
                    "RuntimeFailedConfig");
  }
  if (!time->is_number() || time->get<double>() <= 0) {
    throw Error(ErrorCode::kInvalidFile,
                where + ": \"time\" is " + time->dump() + ", not a positive number of ms");
  }
  const double gflops = number_field(record, "GFLOP/s", 0, Figure::kNonNegative, where);
  return recording::measured_result(
      config, time->get<double>(),
      recording::durations(record.value("times", nlohmann::ordered_json()), where + ": \"times\""),
      gflops, compile);
}

}  // namespace

Journal kernel_tuner_cache_journal(const std::string& path, const nlohmann::ordered_json& doc) {
  const auto& params = doc.at("tune_params");
  const auto& cache = doc.at("cache");
  if (!params.is_object() || !cache.is_object()) {
    throw invalid_file(path, "\"tune_params\" and \"cache\" must be objects");
  }
  std::vector<std::string> names;
  if (doc.contains("tune_params_keys") && doc["tune_params_keys"].is_array()) {
    for (const auto& n : doc["tune_params_keys"]) {
      if (!n.is_string()) {
        throw invalid_file(path, "tune_params_keys holds " + n.dump() + ", not a parameter name");
      }
      names.push_back(n.get<std::string>());
    }
  } else {
    for (const auto& [name, values] : params.items()) names.push_back(name);
  }
  std::map<std::string, std::vector<nlohmann::ordered_json>> values;
  for (const auto& name : names) {
    if (!params.contains(name) || !params[name].is_array()) {
      throw invalid_file(path, "tune_params has no list of values for " + name);
    }
    values[name] = params[name].get<std::vector<nlohmann::ordered_json>>();
  }
  const recording::ValueCoder coder(values);

  const std::string kernel = string_field(doc, "kernel_name", "", path);
  Problem problem;
  recording::ReadNotes notes;
  problem.shape = recording::shape_from_size(doc.value("problem_size", nlohmann::ordered_json()),
                                             recorded_flops(cache), notes);
  for (const auto& w : notes.warnings) spdlog::warn("{}: {}", path, w);
  for (const auto& n : notes.notes) spdlog::info("{}: {}", path, n);
  for (const auto& name : coder.coded()) {
    spdlog::info(
        "{}: parameter {} takes values that are not whole numbers; replayed as their "
        "positions in its list",
        path, name);
  }

  Journal j;
  j.path = path;
  j.headers.push_back({{"type", "header"},
                       {"source", "kernel_tuner_cache"},
                       {"kernel", kernel},
                       {"device", {{"name", string_field(doc, "device_name", "", path)}}},
                       {"objective", string_field(doc, "objective", "", path)},
                       {"tune_params", params}});
  for (const auto& [key, record] : cache.items()) {
    const std::string where = path + ": cache entry \"" + key + "\"";
    if (!record.is_object()) throw Error(ErrorCode::kInvalidFile, where + " is not an object");
    Configuration config;
    for (size_t i = 0; i < names.size(); ++i) {
      config[names[i]] = coder.code(names[i], parameter_value(record, key, names, i, where), where);
    }
    j.entries.push_back({kernel, problem, cache_result(record, config, where), 0});
  }
  if (j.entries.empty()) throw invalid_file(path, "the cache holds no entry");
  double combinations = 1;
  for (const auto& [name, list] : values) combinations *= double(list.size());
  // Scores are measured against the best entry; the file cannot say whether that is the space's.
  spdlog::info(
      "{}: {} entries of the {:.0f} combinations of its tune_params (a Kernel Tuner cache "
      "does not record the restrictions that rule out the rest)",
      path, j.entries.size(), combinations);
  return j;
}

}  // namespace gemmtune
