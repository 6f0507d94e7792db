// SPDX-License-Identifier: Apache-2.0
#include "src/core/result.hpp"

#include <limits>

#include "src/core/error.hpp"
#include "src/core/json_reader.hpp"

namespace gemmtune {

namespace {
const std::pair<Status, const char*> kStatusNames[] = {
    {Status::kOk, "ok"},
    {Status::kInvalid, "invalid"},
    {Status::kDeviceLimit, "device_limit"},
    {Status::kCompileFailed, "compile_failed"},
    {Status::kRunFailed, "run_failed"},
    {Status::kWrongResult, "wrong_result"},
    {Status::kTimeout, "timeout"},
    {Status::kCrashed, "crashed"},
    {Status::kUnsupported, "unsupported"},
};

const std::pair<TimingClock, const char*> kClockNames[] = {
    {TimingClock::kUnrecorded, "unrecorded"},
    {TimingClock::kQueued, "queued"},
    {TimingClock::kHostQueued, "host-queued"},
    {TimingClock::kWholeCall, "whole-call"},
};

template <typename T>
void put_optional(nlohmann::json& j, const char* key, const std::optional<T>& v) {
  if (v) j[key] = *v;
}
}  // namespace

std::string to_string(Status s) {
  for (const auto& [st, name] : kStatusNames) {
    if (st == s) return name;
  }
  return "unknown";
}

Status parse_status(const std::string& s) {
  for (const auto& [st, name] : kStatusNames) {
    if (s == name) return st;
  }
  throw invalid_argument("unknown result status '" + s + "'");
}

std::string to_string(TimingClock c) {
  for (const auto& [clock, name] : kClockNames) {
    if (clock == c) return name;
  }
  return "unrecorded";
}

TimingClock parse_timing_clock(const std::string& s) {
  for (const auto& [clock, name] : kClockNames) {
    if (s == name) return clock;
  }
  throw invalid_argument("unknown timing clock '" + s +
                         "' (expected queued, host-queued or whole-call)");
}

void to_json(nlohmann::json& j, const TimingStats& t) {
  j = {{"median_ms", t.median_ms},
       {"min_ms", t.min_ms},
       {"mean_ms", t.mean_ms},
       {"max_ms", t.max_ms},
       {"cv", t.cv},
       {"runs", t.runs},
       {"kernel_median_ms", t.kernel_median_ms}};
  if (t.clock != TimingClock::kUnrecorded) j["clock"] = to_string(t.clock);
  if (t.calls > 0) j["calls"] = t.calls;
  if (!t.clock_note.empty()) j["clock_note"] = t.clock_note;
  if (t.stopped_above) j["stopped_above"] = true;
  if (t.retaken_samples > 0) j["retaken_samples"] = t.retaken_samples;
}

void from_json(const nlohmann::json& j, TimingStats& t) {
  const JsonReader r(j);
  r.expect_object();
  t.median_ms = r.number_or("median_ms", 0.0);
  t.min_ms = r.number_or("min_ms", 0.0);
  t.mean_ms = r.number_or("mean_ms", 0.0);
  t.max_ms = r.number_or("max_ms", 0.0);
  t.cv = r.number_or("cv", 0.0);
  t.runs = static_cast<int>(r.integer_or("runs", 0, 0, std::numeric_limits<int>::max()));
  t.kernel_median_ms = r.number_or("kernel_median_ms", 0.0);
  if (j.contains("clock")) t.clock = parse_timing_clock(r.string_or("clock", ""));
  t.calls = static_cast<int>(r.integer_or("calls", 0, 0, std::numeric_limits<int>::max()));
  t.clock_note = r.string_or("clock_note", "");
  t.stopped_above = r.boolean_or("stopped_above", false);
  t.retaken_samples =
      static_cast<int>(r.integer_or("retaken_samples", 0, 0, std::numeric_limits<int>::max()));
}

void to_json(nlohmann::json& j, const ResourceUsage& u) {
  j = nlohmann::json::object();
  put_optional(j, "local_mem_bytes", u.local_mem_bytes);
  put_optional(j, "private_mem_bytes", u.private_mem_bytes);
  put_optional(j, "registers", u.registers);
  put_optional(j, "spills", u.spills);
  put_optional(j, "max_work_group_size", u.max_work_group_size);
  if (!u.source.empty()) j["source"] = u.source;
}

void from_json(const nlohmann::json& j, ResourceUsage& u) {
  const JsonReader r(j);
  r.expect_object();
  u.local_mem_bytes = r.optional_integer("local_mem_bytes");
  u.private_mem_bytes = r.optional_integer("private_mem_bytes");
  u.registers = r.optional_integer("registers");
  u.spills = r.optional_integer("spills");
  u.max_work_group_size = r.optional_integer("max_work_group_size");
  u.source = r.string_or("source", "");
}

void to_json(nlohmann::json& j, const Result& r) {
  j = {{"config", configuration_to_json(r.config)},
       {"status", to_string(r.status)},
       {"gflops", r.gflops},
       {"time", r.time},
       {"max_error", r.max_error},
       {"tolerance", r.tolerance},
       {"binary_cached", r.binary_cached},
       {"compile_ms", r.compile_ms},
       {"helper_kernels", r.helper_kernels},
       {"usage", r.usage}};
  if (!r.message.empty()) j["message"] = r.message;
  if (r.steps.recorded()) {
    j["steps_ms"] = {{"program", r.steps.program_ms},
                     {"verify", r.steps.verify_ms},
                     {"timing", r.steps.timing_ms}};
  }
}

void from_json(const nlohmann::json& j, Result& r) {
  const JsonReader in(j);
  in.expect_object();
  const JsonReader config = in.object("config");
  r.config = config.read([&] { return configuration_from_json(config.value()); });
  r.status = in.parsed("status", parse_status);
  r.gflops = in.number_or("gflops", 0.0);
  if (in.has("time")) r.time = in.get<TimingStats>("time");
  r.max_error = in.number_or("max_error", 0.0);
  r.tolerance = in.number_or("tolerance", 0.0);
  r.binary_cached = in.boolean_or("binary_cached", false);
  r.compile_ms = in.number_or("compile_ms", 0.0);
  r.helper_kernels = in.boolean_or("helper_kernels", false);
  if (in.has("usage")) r.usage = in.get<ResourceUsage>("usage");
  r.message = in.string_or("message", "");
  if (const auto steps = in.optional_object("steps_ms")) {
    r.steps.program_ms = steps->number_or("program", 0.0);
    r.steps.verify_ms = steps->number_or("verify", 0.0);
    r.steps.timing_ms = steps->number_or("timing", 0.0);
  }
}

}  // namespace gemmtune
