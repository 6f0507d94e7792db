#include "src/bench/bench_suite.hpp"
#include "src/core/error.hpp"

namespace gemmtune {

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

void to_json(nlohmann::json& j, const SideResult& s) {
  j = {{"available", s.available},        {"status", s.status},   {"message", s.message},
       {"verified", s.verified},          {"checked", s.checked}, {"max_error", s.max_error},
       {"tolerance", s.tolerance},        {"wall", s.wall},       {"gflops", s.gflops},
       {"kernel_gflops", s.kernel_gflops}};
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
  s.kernel_gflops = j.value("kernel_gflops", 0.0);
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
  j["chosen"] = r.chosen ? nlohmann::json(*r.chosen) : nlohmann::json(nullptr);
  j["ratio"] = r.ratio ? nlohmann::json(*r.ratio) : nlohmann::json(nullptr);
  if (r.cublas_gflops) j["cublas_gflops"] = *r.cublas_gflops;
  if (r.cublas_ratio) j["cublas_ratio"] = *r.cublas_ratio;
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
  if (j.contains("chosen") && !j["chosen"].is_null()) r.chosen = j["chosen"].get<Candidate>();
  if (j.contains("trials")) r.trials = j["trials"].get<std::vector<CandidateTrial>>();
  r.gemmtune = j.at("gemmtune").get<SideResult>();
  r.clblast = j.at("clblast").get<SideResult>();
  if (j.contains("ratio") && j["ratio"].is_number()) r.ratio = j["ratio"].get<double>();
  if (j.contains("cublas_gflops")) r.cublas_gflops = j["cublas_gflops"].get<double>();
  if (j.contains("cublas_ratio")) r.cublas_ratio = j["cublas_ratio"].get<double>();
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
       {"reps", r.reps},
       {"warmup", r.warmup},
       {"cublas_source", r.cublas_source},
       {"rows", r.rows}};
  // Derived from the rows (not read back): gemmtune's ratios against each other side.
  for (bool cublas : {false, true}) {
    const RatioSummary s = summarize_ratios(r, cublas);
    if (s.rows == 0) continue;
    j["summary"][cublas ? "cublas" : "clblast"] = {
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
  r.reps = j.value("reps", 0);
  r.warmup = j.value("warmup", 0);
  r.cublas_source = j.value("cublas_source", "");
  r.rows = j.at("rows").get<std::vector<SuiteRow>>();
}

}  // namespace gemmtune
