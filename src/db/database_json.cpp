// SPDX-License-Identifier: Apache-2.0
// The JSON form of a database's parts (device, metadata, entry keys, provenance, baseline,
// entries); the checks of a whole file are in database.cpp.
#include <nlohmann/json.hpp>

#include "src/core/error.hpp"
#include "src/core/json_reader.hpp"
#include "src/core/version.hpp"
#include "src/db/database.hpp"

namespace gemmtune {

namespace {
constexpr int64_t kMaxUint32 = 0xFFFFFFFF;
}  // namespace

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
  const JsonReader r(j);
  r.expect_object();
  d.id = r.string_or("id", "");
  d.name = r.string_or("name", "");
  d.vendor = r.string_or("vendor", "");
  d.type = r.string_or("type", "");
  d.platform = r.string_or("platform", "");
  d.platform_version = r.string_or("platform_version", "");
  d.driver_version = r.string_or("driver_version", "");
  d.opencl_version = r.string_or("opencl_version", "");
  d.opencl_c_version = r.string_or("opencl_c_version", "");
  d.profile = r.string_or("profile", "generic");
  d.compute_units = static_cast<uint32_t>(r.integer_or("compute_units", 0, 0, kMaxUint32));
  d.max_clock_mhz = static_cast<uint32_t>(r.integer_or("max_clock_mhz", 0, 0, kMaxUint32));
}

void to_json(nlohmann::json& j, const DatabaseMetadata& m) {
  j = {{"gemmtune_version", m.gemmtune_version}, {"created", m.created}, {"updated", m.updated}};
}

void from_json(const nlohmann::json& j, DatabaseMetadata& m) {
  const JsonReader r(j);
  r.expect_object();
  m.gemmtune_version = r.string_or("gemmtune_version", "");
  m.created = r.string_or("created", "");
  m.updated = r.string_or("updated", "");
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
  if (!k.epilogue.none()) j["epilogue"] = to_string(k.epilogue);
}

void from_json(const nlohmann::json& j, EntryKey& k) {
  const JsonReader r(j);
  r.expect_object();
  k.kernel = r.string("kernel");
  k.precision = r.parsed("precision", parse_precision);
  k.order = r.parsed_or("order", "row", parse_order);
  // Checked as a problem's layout is.
  k.layout = r.parsed_or("layout", "NN", [](const std::string& v) {
    Problem check;
    set_layout(check, v);
    return v;
  });
  k.batch = r.integer_or("batch", 1, 1);
  // Files written before the layout was part of the key hold strided batches only.
  k.batch_layout = r.parsed_or("batch_layout", "strided", parse_batch_layout);
  if (k.batch <= 1) k.batch_layout = BatchLayout::kStrided;
  k.shape = Shape{r.integer("m", 1), r.integer("n", 1), r.integer("k", 1)};
  k.epilogue = r.parsed_or("epilogue", "", parse_epilogue);
}

// ---- Provenance / entries ----

void to_json(nlohmann::json& j, const Provenance& p) {
  j = {{"strategy", p.strategy}, {"evaluations", p.evaluations},           {"seed", p.seed},
       {"date", p.date},         {"gemmtune_version", p.gemmtune_version}, {"space", p.space}};
}

void from_json(const nlohmann::json& j, Provenance& p) {
  const JsonReader r(j);
  r.expect_object();
  p.strategy = r.string_or("strategy", "");
  p.evaluations = r.integer_or("evaluations", 0, 0);
  // Seeds are unsigned 64-bit: read as they were written.
  p.seed = r.has("seed") ? r.field("seed").convert<uint64_t>() : 0;
  p.date = r.string_or("date", "");
  p.gemmtune_version = r.string_or("gemmtune_version", "");
  p.space = r.string_or("space", "");
}

void to_json(nlohmann::json& j, const Baseline& b) {
  j = {{"gflops", b.gflops}, {"by", b.by}};
}

void from_json(const nlohmann::json& j, Baseline& b) {
  const JsonReader r(j);
  b.gflops = r.number("gflops");
  b.by = r.string("by");
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
  const JsonReader r(j);
  r.expect_object();
  e.key = r.get<EntryKey>("key");
  const JsonReader params = r.object("parameters");
  e.parameters = params.read([&] { return configuration_from_json(params.value()); });
  e.status = r.parsed_or("status", "ok", parse_status);
  e.message = r.string_or("message", "");
  e.gflops = r.number("gflops");
  if (r.has("time")) e.time = r.get<TimingStats>("time");
  e.max_error = r.number_or("max_error", 0.0);
  e.tolerance = r.number_or("tolerance", 0.0);
  e.alpha = r.number_or("alpha", 1.0);
  e.beta = r.number_or("beta", 0.0);
  if (r.has("usage")) e.usage = r.get<ResourceUsage>("usage");
  if (r.has("found")) e.found = r.get<Provenance>("found");
  if (r.has("baseline")) e.baseline = r.get<Baseline>("baseline");
}

DatabaseEntry DatabaseEntry::from_result(const std::string& kernel, const Problem& problem,
                                         const Result& best, const Provenance& found) {
  DatabaseEntry e;
  e.key = EntryKey::of(kernel, problem);
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
