// SPDX-License-Identifier: Apache-2.0
#include "src/bench/bench_suite.hpp"
#include "src/core/error.hpp"
#include "src/core/json_util.hpp"

namespace gemmtune {

namespace {

template <typename T>
nlohmann::json or_null(const std::optional<T>& v) {
  return v ? nlohmann::json(*v) : nlohmann::json(nullptr);
}

}  // namespace

void to_json(nlohmann::json& j, const Candidate& c) {
  j = {{"kernel", c.kernel},     {"parameters", configuration_to_json(c.parameters)},
       {"origin", c.origin},     {"tuned_shape", c.tuned_shape},
       {"database", c.database}, {"recorded_gflops", c.recorded_gflops},
       {"distance", c.distance}};
  if (c.predicted_gflops > 0) j["predicted_gflops"] = c.predicted_gflops;
  if (!c.reason.empty()) j["reason"] = c.reason;
}

void from_json(const nlohmann::json& j, Candidate& c) {
  c.kernel = j.at("kernel").get<std::string>();
  c.parameters = configuration_from_json(j.at("parameters"));
  c.origin = j.at("origin").get<std::string>();
  c.tuned_shape = j.at("tuned_shape").get<Shape>();
  c.database = j.value("database", "");
  c.recorded_gflops = j.value("recorded_gflops", 0.0);
  c.distance = j.value("distance", 0.0);
  c.predicted_gflops = j.value("predicted_gflops", 0.0);
  c.reason = j.value("reason", "");
}

void to_json(nlohmann::json& j, const LibraryChoice& c) {
  j = {{"kernel", c.kernel},     {"parameters", c.parameters}, {"source", c.source},
       {"database", c.database}, {"entry", c.entry},           {"exact", c.exact},
       {"notes", c.notes}};
}

void from_json(const nlohmann::json& j, LibraryChoice& c) {
  c.kernel = j.at("kernel").get<std::string>();
  c.parameters = j.value("parameters", "");
  c.source = j.at("source").get<std::string>();
  c.database = j.value("database", "");
  c.entry = j.value("entry", "");
  c.exact = j.value("exact", false);
  c.notes = j.value("notes", std::vector<std::string>{});
}

void to_json(nlohmann::json& j, const SideResult& s) {
  j = {{"available", s.available},   {"status", s.status},
       {"message", s.message},       {"verified", s.verified},
       {"checked", s.checked},       {"max_error", s.max_error},
       {"tolerance", s.tolerance},   {"wall", s.wall},
       {"gflops", s.gflops},         {"gpu", s.gpu},
       {"gpu_gflops", s.gpu_gflops}, {"host_ms", s.host_ms}};
  // Infinity (a NaN output) has no JSON form.
  if (!std::isfinite(s.max_error)) j["max_error"] = nullptr;
}

void from_json(const nlohmann::json& j, SideResult& s) {
  s.available = j.at("available").get<bool>();
  s.status = j.at("status").get<std::string>();
  s.message = j.value("message", "");
  s.verified = j.value("verified", false);
  s.checked = j.value("checked", "");
  s.max_error = j.contains("max_error") && j["max_error"].is_number()
                    ? j["max_error"].get<double>()
                    : std::numeric_limits<double>::infinity();
  s.tolerance = j.value("tolerance", 0.0);
  if (j.contains("wall")) s.wall = j["wall"].get<TimingStats>();
  s.gflops = j.value("gflops", 0.0);
  if (j.contains("gpu")) s.gpu = j["gpu"].get<TimingStats>();
  // Schema 3 had gemmtune's kernels by one call's events as "kernel_gflops".
  s.gpu_gflops = j.value("gpu_gflops", j.value("kernel_gflops", 0.0));
  s.host_ms = j.value("host_ms", 0.0);
}

void to_json(nlohmann::json& j, const CandidateTrial& t) {
  j = {{"candidate", t.candidate},
       {"status", t.status},
       {"message", t.message},
       {"median_ms", t.median_ms},
       {"gflops", t.gflops}};
}

void from_json(const nlohmann::json& j, CandidateTrial& t) {
  t.candidate = j.at("candidate").get<Candidate>();
  t.status = j.at("status").get<std::string>();
  t.message = j.value("message", "");
  t.median_ms = j.value("median_ms", 0.0);
  t.gflops = j.value("gflops", 0.0);
}

void to_json(nlohmann::json& j, const SuiteRow& r) {
  j = {{"shape", r.shape},       {"precision", to_string(r.precision)},
       {"batch", r.batch},       {"batch_layout", to_string(r.batch_layout)},
       {"epilogue", r.epilogue}, {"trials", r.trials},
       {"gemmtune", r.gemmtune}, {"clblast", r.clblast}};
  j["chosen"] = or_null(r.chosen);
  j["ratio"] = or_null(r.ratio);
  j["library"] = r.library;
  j["library_choice"] = or_null(r.library_choice);
  j["library_ratio"] = or_null(r.library_ratio);
  j["gpu_ratio"] = or_null(r.gpu_ratio);
  j["library_gpu_ratio"] = or_null(r.library_gpu_ratio);
  if (r.clblast_tuned.available || !r.clblast_tuned.message.empty()) {
    j["clblast_tuned"] = r.clblast_tuned;
    j["clblast_tuned_gain"] = or_null(r.clblast_tuned_gain);
  }
  // Reports of schema 2 and before hold "cublas_gflops" and "cublas_ratio" from CUDA events
  // divided into gemmtune's whole call: different names now, so that they are not read as these.
  if (r.cublas_gflops) j["cublas_call_gflops"] = *r.cublas_gflops;
  if (r.cublas_ratio) j["cublas_call_ratio"] = *r.cublas_ratio;
  if (r.cublas_device_gflops) j["cublas_device_gflops"] = *r.cublas_device_gflops;
  if (r.cublas_device_ratio) j["cublas_device_ratio"] = *r.cublas_device_ratio;
  if (r.library_cublas_device_ratio) {
    j["library_cublas_device_ratio"] = *r.library_cublas_device_ratio;
  }
  if (r.cublas_host_ms) j["cublas_host_ms"] = *r.cublas_host_ms;
  if (const auto& m = r.memory) {
    j["memory"] = {{"bytes", m->bytes},
                   {"copy_ms", m->copy_ms},
                   {"copy_gbs", m->gbs(m->copy_ms)},
                   {"profile_gbs", m->profile_gbs},
                   {"rule", m->rule}};
    if (r.gemmtune.ok()) j["memory"]["gemmtune_gbs"] = m->gbs(r.gemmtune.wall.median_ms);
    if (r.library.ok()) j["memory"]["library_gbs"] = m->gbs(r.library.wall.median_ms);
  }
}

void from_json(const nlohmann::json& j, SuiteRow& r) {
  r.shape = j.at("shape").get<Shape>();
  // Version-1 rows name none of these: they were single FP32 GEMMs.
  r.precision = parse_precision(j.value("precision", "32"));
  r.batch = j.value("batch", int64_t{1});
  if (r.batch < 1) throw invalid_argument("batch " + std::to_string(r.batch) + " is not positive");
  r.batch_layout =
      r.batch > 1 ? parse_batch_layout(j.value("batch_layout", "strided")) : BatchLayout::kStrided;
  r.epilogue = j.value("epilogue", false);
  r.chosen = optional_field<Candidate>(j, "chosen");
  if (j.contains("trials")) r.trials = j["trials"].get<std::vector<CandidateTrial>>();
  r.gemmtune = j.at("gemmtune").get<SideResult>();
  r.clblast = j.at("clblast").get<SideResult>();
  r.ratio = optional_field<double>(j, "ratio");
  // Reports from before the library column have none: n/a.
  if (j.contains("library")) r.library = j["library"].get<SideResult>();
  r.library_choice = optional_field<LibraryChoice>(j, "library_choice");
  r.library_ratio = optional_field<double>(j, "library_ratio");
  r.gpu_ratio = optional_field<double>(j, "gpu_ratio");
  r.library_gpu_ratio = optional_field<double>(j, "library_gpu_ratio");
  if (j.contains("clblast_tuned")) r.clblast_tuned = j["clblast_tuned"].get<SideResult>();
  r.clblast_tuned_gain = optional_field<double>(j, "clblast_tuned_gain");
  r.cublas_gflops = optional_field<double>(j, "cublas_call_gflops");
  r.cublas_ratio = optional_field<double>(j, "cublas_call_ratio");
  r.cublas_device_gflops = optional_field<double>(j, "cublas_device_gflops");
  if (!r.cublas_device_gflops) r.cublas_device_gflops = optional_field<double>(j, "cublas_gflops");
  r.cublas_device_ratio = optional_field<double>(j, "cublas_device_ratio");
  r.library_cublas_device_ratio = optional_field<double>(j, "library_cublas_device_ratio");
  r.cublas_host_ms = optional_field<double>(j, "cublas_host_ms");
  if (j.contains("memory")) {
    const auto& m = j["memory"];
    r.memory = MemoryBound{m.at("bytes").get<double>(), m.at("copy_ms").get<double>(),
                           m.value("profile_gbs", 0.0), m.value("rule", "")};
  }
}

void to_json(nlohmann::json& j, const SuiteReport& r) {
  j = {{"format", kBenchSuiteFormat},
       {"schema_version", kBenchSuiteSchemaVersion},
       {"device", r.device},
       {"date", r.date},
       {"command", r.command},
       {"gemmtune_version", r.gemmtune_version},
       {"databases", r.databases},
       {"clblast", r.clblast},
       {"clblast_note", r.clblast_note},
       {"clblast_tuned", r.clblast_tuned},
       {"reps", r.reps},
       {"warmup", r.warmup},
       {"cublas_source", r.cublas_source},
       {"library_database", r.library_database},
       {"stale_entries", r.stale_entries},
       {"rows", r.rows}};
  // Derived from the rows (not read back): gemmtune's ratios against each other side.
  for (const PeerInfo& peer : all_peers()) {
    const RatioSummary s = summarize_ratios(r, peer.peer);
    if (s.rows == 0) continue;
    j["summary"][peer.key] = {
        {"rows", s.rows}, {"geomean", s.geomean}, {"worst", s.worst}, {"worst_row", s.worst_row}};
  }
}

void from_json(const nlohmann::json& j, SuiteReport& r) {
  if (!j.is_object() || j.value("format", "") != kBenchSuiteFormat) {
    throw Error(ErrorCode::kInvalidFile, std::string("not a ") + kBenchSuiteFormat + " document");
  }
  r.device = j.at("device").get<DeviceInfo>();
  r.date = j.value("date", "");
  r.command = j.value("command", "");
  r.gemmtune_version = j.value("gemmtune_version", "");
  r.databases = j.value("databases", std::vector<std::string>{});
  r.clblast = j.value("clblast", false);
  r.clblast_note = j.value("clblast_note", "");
  r.clblast_tuned = j.value("clblast_tuned", "");
  r.reps = j.value("reps", 0);
  r.warmup = j.value("warmup", 0);
  r.cublas_source = j.value("cublas_source", "");
  r.library_database = j.value("library_database", "");
  r.stale_entries = j.value("stale_entries", std::vector<std::string>{});
  r.rows = j.at("rows").get<std::vector<SuiteRow>>();
}

}  // namespace gemmtune
