// The JSON form of a database's parts (device, metadata, entry keys, provenance, baseline,
// entries); the checks of a whole file are in database.cpp.
#include <nlohmann/json.hpp>

#include "src/core/error.hpp"
#include "src/core/version.hpp"
#include "src/db/database.hpp"

namespace gemmtune {

void to_json(nlohmann::json& j, const DatabaseDevice& d) {
  j = {{"id", d.id},
       {"name", d.name},
       {"vendor", d.vendor},
       {"type", d.type},
       {"platform", d.platform},
       {"platform_version", d.platform_version},
       {"driver_version", d.driver_version},
       {"opencl_version", d.opencl_version},
       {"opencl_c_version", d.opencl_c_version},
       {"profile", d.profile},
       {"compute_units", d.compute_units},
       {"max_clock_mhz", d.max_clock_mhz}};
}

void from_json(const nlohmann::json& j, DatabaseDevice& d) {
  d.id = j.value("id", "");
  d.name = j.value("name", "");
  d.vendor = j.value("vendor", "");
  d.type = j.value("type", "");
  d.platform = j.value("platform", "");
  d.platform_version = j.value("platform_version", "");
  d.driver_version = j.value("driver_version", "");
  d.opencl_version = j.value("opencl_version", "");
  d.opencl_c_version = j.value("opencl_c_version", "");
  d.profile = j.value("profile", "generic");
  d.compute_units = j.value("compute_units", 0u);
  d.max_clock_mhz = j.value("max_clock_mhz", 0u);
}

void to_json(nlohmann::json& j, const DatabaseMetadata& m) {
  j = {{"gemmtune_version", m.gemmtune_version}, {"created", m.created}, {"updated", m.updated}};
}

void from_json(const nlohmann::json& j, DatabaseMetadata& m) {
  m.gemmtune_version = j.value("gemmtune_version", "");
  m.created = j.value("created", "");
  m.updated = j.value("updated", "");
}

void to_json(nlohmann::json& j, const EntryKey& k) {
  j = {{"kernel", k.kernel},
       {"precision", to_string(k.precision)},
       {"order", k.order == Order::kRowMajor ? "row" : "col"},
       {"layout", k.layout},
       {"batch", k.batch},
       {"m", k.shape.m},
       {"n", k.shape.n},
       {"k", k.shape.k}};
  // Written for batches only, as Problem does, so that files of single GEMMs stay as they were.
  if (k.batch > 1) j["batch_layout"] = to_string(k.batch_layout);
  if (!k.epilogue.empty()) j["epilogue"] = k.epilogue;
}

void from_json(const nlohmann::json& j, EntryKey& k) {
  k.kernel = j.at("kernel").get<std::string>();
  k.precision = parse_precision(j.at("precision").get<std::string>());
  k.order = parse_order(j.value("order", "row"));
  k.layout = j.value("layout", "NN");
  Problem check;
  set_layout(check, k.layout);
  k.batch = j.value("batch", int64_t{1});
  // Files written before the layout was part of the key hold strided batches only.
  k.batch_layout = parse_batch_layout(j.value("batch_layout", "strided"));
  if (k.batch <= 1) k.batch_layout = BatchLayout::kStrided;
  k.shape = Shape{j.at("m").get<int64_t>(), j.at("n").get<int64_t>(), j.at("k").get<int64_t>()};
  k.epilogue = canonical_epilogue(j.value("epilogue", ""));
}

// ---- Provenance / entries ----

void to_json(nlohmann::json& j, const Provenance& p) {
  j = {{"strategy", p.strategy}, {"evaluations", p.evaluations},           {"seed", p.seed},
       {"date", p.date},         {"gemmtune_version", p.gemmtune_version}, {"space", p.space}};
}

void from_json(const nlohmann::json& j, Provenance& p) {
  p.strategy = j.value("strategy", "");
  p.evaluations = j.value("evaluations", int64_t{0});
  p.seed = j.value("seed", uint64_t{0});
  p.date = j.value("date", "");
  p.gemmtune_version = j.value("gemmtune_version", "");
  p.space = j.value("space", "");
}

void to_json(nlohmann::json& j, const Baseline& b) {
  j = {{"gflops", b.gflops}, {"by", b.by}};
}

void from_json(const nlohmann::json& j, Baseline& b) {
  b.gflops = j.at("gflops").get<double>();
  b.by = j.at("by").get<std::string>();
}

void to_json(nlohmann::json& j, const DatabaseEntry& e) {
  j = {{"key", e.key},
       {"parameters", configuration_to_json(e.parameters)},
       {"status", to_string(e.status)},
       {"gflops", e.gflops},
       {"time", e.time},
       {"max_error", e.max_error},
       {"tolerance", e.tolerance},
       {"alpha", e.alpha},
       {"beta", e.beta},
       {"found", e.found}};
  if (!e.message.empty()) j["message"] = e.message;
  nlohmann::json usage = e.usage;
  if (!usage.empty()) j["usage"] = usage;
  if (e.baseline) j["baseline"] = *e.baseline;
}

void from_json(const nlohmann::json& j, DatabaseEntry& e) {
  e.key = j.at("key").get<EntryKey>();
  e.parameters = configuration_from_json(j.at("parameters"));
  e.status = parse_status(j.value("status", "ok"));
  e.message = j.value("message", "");
  e.gflops = j.at("gflops").get<double>();
  if (j.contains("time")) e.time = j["time"].get<TimingStats>();
  e.max_error = j.value("max_error", 0.0);
  e.tolerance = j.value("tolerance", 0.0);
  e.alpha = j.value("alpha", 1.0);
  e.beta = j.value("beta", 0.0);
  if (j.contains("usage")) e.usage = j["usage"].get<ResourceUsage>();
  if (j.contains("found")) e.found = j["found"].get<Provenance>();
  if (j.contains("baseline")) e.baseline = j["baseline"].get<Baseline>();
}

DatabaseEntry DatabaseEntry::from_result(const Problem& problem, const Result& best,
                                         const Provenance& found) {
  DatabaseEntry e;
  e.key = EntryKey::of(problem);
  e.parameters = best.config;
  e.status = best.status;
  e.message = best.message;
  e.gflops = best.gflops;
  e.time = best.time;
  e.max_error = best.max_error;
  e.tolerance = best.tolerance;
  e.alpha = problem.alpha;
  e.beta = problem.beta;
  e.usage = best.usage;
  e.found = found;
  if (e.found.date.empty()) e.found.date = iso_utc_now();
  if (e.found.gemmtune_version.empty()) e.found.gemmtune_version = version();
  return e;
}

}  // namespace gemmtune
