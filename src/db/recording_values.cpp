// SPDX-License-Identifier: Apache-2.0
#include "src/db/recording_values.hpp"

#include <algorithm>
#include <cmath>

#include "src/core/error.hpp"
#include "src/core/timing_stats.hpp"

namespace gemmtune::recording {

namespace {

// A JSON number that holds a whole number within int64_t (1 and 1.0 alike).
bool whole_number(const nlohmann::ordered_json& v) {
  if (v.is_number_integer()) return true;
  if (!v.is_number_float()) return false;
  const double d = v.get<double>();
  constexpr double kLimit = 9.2e18;  // within int64_t
  return std::isfinite(d) && std::floor(d) == d && std::fabs(d) < kLimit;
}

bool plain_value(const nlohmann::ordered_json& v) {
  return whole_number(v) || v.is_boolean();
}

}  // namespace

ValueCoder::ValueCoder(std::map<std::string, std::vector<nlohmann::ordered_json>> values)
    : values_(std::move(values)) {
  for (const auto& [name, list] : values_) {
    coded_[name] = !std::all_of(list.begin(), list.end(), plain_value);
  }
}

int64_t ValueCoder::code(const std::string& name, const nlohmann::ordered_json& value,
                         const std::string& where) const {
  const auto c = coded_.find(name);
  if (c == coded_.end() || !c->second) {
    if (value.is_boolean()) return value.get<bool>() ? 1 : 0;
    if (whole_number(value))
      return value.is_number_integer() ? value.get<int64_t>() : int64_t(value.get<double>());
    if (c == coded_.end()) {
      throw Error(ErrorCode::kInvalidFile,
                  where + ": parameter " + name + " has value " + value.dump() +
                      ", which is not a whole number, and the file lists no values for it");
    }
  }
  const auto& list = values_.at(name);
  const auto it = std::find(list.begin(), list.end(), value);
  if (it == list.end()) {
    throw Error(ErrorCode::kInvalidFile, where + ": parameter " + name + " has value " +
                                             value.dump() + ", which is not among its values");
  }
  return int64_t(it - list.begin());
}

std::vector<std::string> ValueCoder::coded() const {
  std::vector<std::string> out;
  for (const auto& [name, coded] : coded_) {
    if (coded) out.push_back(name);
  }
  return out;
}

Shape shape_from_size(const nlohmann::ordered_json& size, double flops, ReadNotes& notes) {
  std::vector<int64_t> dims;
  if (size.is_number_integer()) dims.push_back(size.get<int64_t>());
  if (size.is_array()) {
    for (const auto& d : size) {
      if (d.is_number_integer() && dims.size() < 3) dims.push_back(d.get<int64_t>());
    }
  }
  const bool usable = std::all_of(dims.begin(), dims.end(), [](int64_t d) { return d > 0; });
  if (!usable) dims.clear();
  const size_t recorded = dims.size();
  int64_t product = 1;
  for (int64_t d : dims) product *= d;
  std::string how = "derived from the recorded rate and time (the problem size names M and N)";
  if (recorded == 2 && flops > 0) {
    int64_t derived = std::llround(flops / (2.0 * double(product)));
    // A rate that also counts the scaling of C (2·M·N more operations) gives K + 1; a GEMM
    // recorded by M and N alone is usually square in K too, so K + 1 = M or N is taken as that.
    if (derived - 1 == dims[0] || derived - 1 == dims[1]) {
      --derived;
      how += "; the rate gives K + 1, as when it counts the scaling of C";
    }
    if (derived >= 1) dims.push_back(derived);
  }
  const char* names[] = {"M", "N", "K"};
  std::string missing;
  for (size_t i = dims.size(); i < 3; ++i) {
    missing += std::string(missing.empty() ? "" : ", ") + names[i];
    dims.push_back(1);
  }
  const Shape shape{dims[0], dims[1], dims[2]};
  if (dims.size() > recorded && missing.empty()) {
    notes.notes.push_back("K = " + std::to_string(shape.k) + " " + how);
  } else if (!missing.empty()) {
    notes.warnings.push_back("the problem size names no " + missing + ": taken as 1 (shape " +
                             shape.to_string() + "); times are replayed as recorded");
  }
  return shape;
}

Result measured_result(const Configuration& config, double time_ms,
                       const std::vector<double>& runs_ms, double gflops, double compile_ms) {
  Result r;
  r.config = config;
  r.status = Status::kOk;
  if (runs_ms.empty()) {
    r.time.median_ms = r.time.min_ms = r.time.mean_ms = r.time.max_ms = time_ms;
    r.time.kernel_median_ms = time_ms;
    r.time.runs = 1;
  } else {
    r.time = summarize_times(runs_ms, {});
  }
  r.gflops = gflops;
  r.compile_ms = compile_ms;
  return r;
}

std::string string_field(const nlohmann::ordered_json& object, const std::string& name,
                         const std::string& fallback, const std::string& where) {
  const auto it = object.find(name);
  if (it == object.end() || it->is_null()) return fallback;
  if (!it->is_string()) {
    throw Error(ErrorCode::kInvalidFile,
                where + ": \"" + name + "\" is " + it->dump() + ", not a string");
  }
  return it->get<std::string>();
}

double number_field(const nlohmann::ordered_json& object, const std::string& name, double fallback,
                    Figure figure, const std::string& where) {
  const auto it = object.find(name);
  if (it == object.end() || it->is_null()) return fallback;
  const bool measured = figure == Figure::kMeasured;
  const double v = it->is_number() ? it->get<double>() : 0;
  if (!it->is_number() || !std::isfinite(v) || v < 0 || (measured && v == 0)) {
    throw Error(ErrorCode::kInvalidFile, where + ": \"" + name + "\" is " + it->dump() +
                                             ", not a " +
                                             (measured ? "positive number" : "number >= 0"));
  }
  return v;
}

nlohmann::ordered_json object_field(const nlohmann::ordered_json& object, const std::string& name,
                                    const std::string& where) {
  const auto it = object.find(name);
  if (it == object.end() || it->is_null()) return nlohmann::ordered_json::object();
  if (!it->is_object()) {
    throw Error(ErrorCode::kInvalidFile,
                where + ": \"" + name + "\" is " + it->dump() + ", not an object");
  }
  return *it;
}

std::vector<double> durations(const nlohmann::ordered_json& array, const std::string& where) {
  std::vector<double> out;
  if (array.is_null()) return out;
  if (!array.is_array()) throw Error(ErrorCode::kInvalidFile, where + " is not an array");
  for (const auto& v : array) {
    // A repetition that took no time or less is no measurement: the file is damaged.
    if (!v.is_number() || !std::isfinite(v.get<double>()) || v.get<double>() <= 0) {
      throw Error(ErrorCode::kInvalidFile,
                  where + " holds " + v.dump() + ", not a positive number");
    }
    out.push_back(v.get<double>());
  }
  return out;
}

}  // namespace gemmtune::recording
