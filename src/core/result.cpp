#include "src/core/result.hpp"

#include "src/core/error.hpp"
#include "src/core/json_util.hpp"

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

void to_json(nlohmann::json& j, const TimingStats& t) {
  j = {{"median_ms", t.median_ms},
       {"min_ms", t.min_ms},
       {"mean_ms", t.mean_ms},
       {"max_ms", t.max_ms},
       {"cv", t.cv},
       {"runs", t.runs},
       {"kernel_median_ms", t.kernel_median_ms}};
}

void from_json(const nlohmann::json& j, TimingStats& t) {
  t.median_ms = j.value("median_ms", 0.0);
  t.min_ms = j.value("min_ms", 0.0);
  t.mean_ms = j.value("mean_ms", 0.0);
  t.max_ms = j.value("max_ms", 0.0);
  t.cv = j.value("cv", 0.0);
  t.runs = j.value("runs", 0);
  t.kernel_median_ms = j.value("kernel_median_ms", 0.0);
}

void to_json(nlohmann::json& j, const ResourceUsage& u) {
  j = nlohmann::json::object();
  put_optional(j, "local_mem_bytes", u.local_mem_bytes);
  put_optional(j, "private_mem_bytes", u.private_mem_bytes);
  put_optional(j, "registers", u.registers);
  put_optional(j, "spills", u.spills);
  if (!u.source.empty()) j["source"] = u.source;
}

void from_json(const nlohmann::json& j, ResourceUsage& u) {
  u.local_mem_bytes = optional_field<int64_t>(j, "local_mem_bytes");
  u.private_mem_bytes = optional_field<int64_t>(j, "private_mem_bytes");
  u.registers = optional_field<int64_t>(j, "registers");
  u.spills = optional_field<int64_t>(j, "spills");
  u.source = j.value("source", "");
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
}

void from_json(const nlohmann::json& j, Result& r) {
  r.config = configuration_from_json(j.at("config"));
  r.status = parse_status(j.at("status").get<std::string>());
  r.gflops = j.value("gflops", 0.0);
  if (j.contains("time")) r.time = j["time"].get<TimingStats>();
  r.max_error = j.value("max_error", 0.0);
  r.tolerance = j.value("tolerance", 0.0);
  r.binary_cached = j.value("binary_cached", false);
  r.compile_ms = j.value("compile_ms", 0.0);
  r.helper_kernels = j.value("helper_kernels", false);
  if (j.contains("usage")) r.usage = j["usage"].get<ResourceUsage>();
  r.message = j.value("message", "");
}

}  // namespace gemmtune
