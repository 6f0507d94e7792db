// SPDX-License-Identifier: Apache-2.0
#include "src/db/database.hpp"

#include <algorithm>
#include <cerrno>
#include <cmath>
#include <cstring>
#include <ctime>
#include <filesystem>
#include <map>
#include <optional>
#include <tuple>

#include <fmt/format.h>
#include <spdlog/spdlog.h>

#include "src/core/error.hpp"
#include "src/core/json_reader.hpp"
#include "src/core/json_util.hpp"
#include "src/core/problem_key.hpp"
#include "src/core/version.hpp"
#include "src/db/file_lock.hpp"
#include "src/device/device.hpp"
#include "src/kernel/kernel_spec.hpp"

namespace gemmtune {

namespace {

std::string quoted_or_unknown(const std::string& text) {
  return text.empty() ? std::string("(not recorded)") : "'" + text + "'";
}

bool key_less(const DatabaseEntry& a, const DatabaseEntry& b) {
  return a.key < b.key;
}

std::string order_name(Order o) {
  return o == Order::kRowMajor ? "row" : "col";
}

void create_parent_directories(const std::string& path) {
  const auto parent = std::filesystem::path(path).parent_path();
  if (parent.empty()) return;
  std::error_code ec;
  std::filesystem::create_directories(parent, ec);
  if (ec) throw invalid_file(path, "cannot create its folder: " + ec.message());
}

// The largest coefficient of variation a stored timing may have: a run whose spread is ten times
// its mean measured nothing.
constexpr double kMaxTimingCv = 10;

// Why an entry's figures cannot be a measurement, as (field, reason), or nullopt. A successful
// entry has a positive rate and (when timed) time; a failed one (a bench that could not re-measure)
// may hold zeros. Nothing is negative or non-finite, so that compare's noise band and the reports'
// ratios are never widened or inverted by a damaged file.
std::optional<std::pair<std::string, std::string>> entry_range_problem(const DatabaseEntry& e) {
  auto bad = [](const char* field, const std::string& why) {
    return std::make_optional(std::make_pair(std::string(field), why));
  };
  const bool ok = e.status == Status::kOk;
  const std::pair<const char*, double> figures[] = {
      {"gflops", e.gflops},           {"time.median_ms", e.time.median_ms},
      {"time.min_ms", e.time.min_ms}, {"time.mean_ms", e.time.mean_ms},
      {"time.max_ms", e.time.max_ms}, {"time.kernel_median_ms", e.time.kernel_median_ms},
      {"time.cv", e.time.cv},         {"max_error", e.max_error},
      {"tolerance", e.tolerance}};
  for (const auto& [field, v] : figures) {
    if (!std::isfinite(v)) return bad(field, "is non-finite");
    if (v < 0) return bad(field, fmt::format("is negative ({:g})", v));
  }
  if (ok && e.gflops <= 0) return bad("gflops", "must be positive for an entry with status ok");
  // All-zero timing means "not recorded" (files and entries that carry a rate only); a timing
  // of some runs must have taken time.
  if (ok && e.time.median_ms <= 0 && e.time.runs > 0) {
    return bad("time.median_ms", "must be positive for an entry with status ok");
  }
  if (e.time.runs < 0) return bad("time.runs", "is negative");
  // A cv beyond this is no timing but a damaged file, and would widen compare's noise band until
  // any regression fits in it.
  if (e.time.cv > kMaxTimingCv) {
    return bad("time.cv",
               fmt::format("is {:g}, beyond any timing ({:g} at most)", e.time.cv, kMaxTimingCv));
  }
  if (!std::isfinite(e.alpha) || !std::isfinite(e.beta)) {
    return bad("alpha", "alpha and beta must be finite");
  }
  if (e.baseline && (!std::isfinite(e.baseline->gflops) || e.baseline->gflops <= 0)) {
    return bad("baseline.gflops",
               fmt::format("must be a positive finite rate ({:g})", e.baseline->gflops));
  }
  if (e.baseline && e.baseline->by.empty()) {
    return bad("baseline.by", "must name what was measured (clblast, xgemm_direct defaults, ...)");
  }
  return std::nullopt;
}

}  // namespace

// ---- DatabaseDevice ----

DatabaseDevice DatabaseDevice::from(const DeviceInfo& info) {
  DatabaseDevice d;
  d.id = info.id();
  d.name = info.name;
  d.vendor = info.vendor;
  d.type = info.type;
  d.platform = info.platform_name;
  d.platform_version = info.platform_version;
  d.driver_version = info.driver_version;
  d.opencl_version = info.device_version;
  d.opencl_c_version = info.opencl_c_version;
  d.profile = info.profile;
  d.compute_units = info.compute_units;
  d.max_clock_mhz = info.max_clock_mhz;
  return d;
}

bool DatabaseDevice::same_hardware(const DatabaseDevice& other) const {
  return name == other.name && vendor == other.vendor;
}

std::string DatabaseDevice::driver_difference(const DatabaseDevice& other) const {
  if (driver_version == other.driver_version) return "";
  return "driver " + quoted_or_unknown(other.driver_version) + " instead of " +
         quoted_or_unknown(driver_version);
}

// ---- EntryKey ----

EntryKey EntryKey::of(const std::string& kernel, const Problem& p) {
  EntryKey k;
  k.kernel = kernel;
  k.precision = p.precision;
  k.order = p.order;
  k.layout = p.layout();
  k.batch = p.batch;
  k.batch_layout = p.batch > 1 ? p.batch_layout : BatchLayout::kStrided;
  k.shape = p.shape;
  k.epilogue = p.epilogue;
  return k;
}

Problem EntryKey::problem() const {
  Problem p;
  p.precision = precision;
  p.order = order;
  set_layout(p, layout);
  p.batch = batch;
  p.batch_layout = batch_layout;
  p.shape = shape;
  p.epilogue = epilogue;
  return p;
}

std::string EntryKey::to_string() const {
  const std::string e = gemmtune::to_string(epilogue);
  return kernel + " fp" + gemmtune::to_string(precision) + " " + order_name(order) + " " + layout +
         " b" + std::to_string(batch) +
         (batch > 1 ? " " + gemmtune::to_string(batch_layout) : std::string()) + " " +
         shape.to_string() + (e.empty() ? std::string() : " " + e);
}

bool EntryKey::operator==(const EntryKey& o) const {
  return kernel == o.kernel &&
         ProblemKey(problem(), kWithoutScaling) == ProblemKey(o.problem(), kWithoutScaling);
}

bool EntryKey::operator<(const EntryKey& o) const {
  if (kernel != o.kernel) return kernel < o.kernel;
  return ProblemKey(problem(), kWithoutScaling) < ProblemKey(o.problem(), kWithoutScaling);
}

bool EntryKey::same_family(const EntryKey& o) const {
  return kernel == o.kernel && ProblemKey(problem(), kFamily) == ProblemKey(o.problem(), kFamily);
}

bool DatabaseEntry::faster_than(const DatabaseEntry& other) const {
  if (status != Status::kOk) return false;
  if (other.status != Status::kOk) return true;
  return gflops > other.gflops;
}

std::string to_string(PutOutcome o) {
  switch (o) {
    case PutOutcome::kAdded:
      return "added";
    case PutOutcome::kReplaced:
      return "replaced";
    case PutOutcome::kKeptExisting:
      return "kept existing";
  }
  return "?";
}

// ---- Database ----

Database Database::from_json(const nlohmann::json& j, const std::string& origin) {
  const JsonReader r(j, origin);
  if (!j.is_object() || !j.contains("format") || j["format"] != kDatabaseFormat) {
    r.fail(std::string("not a gemmtune database: expected a JSON object with \"format\": \"") +
           kDatabaseFormat + "\"");
  }
  Database db;
  const int64_t schema = r.integer("schema_version");
  if (schema != kDatabaseSchemaVersion) {
    r.fail("schema_version", "version " + std::to_string(schema) + " is not supported (expected " +
                                 std::to_string(kDatabaseSchemaVersion) + ")");
  }
  db.schema_version = kDatabaseSchemaVersion;
  const JsonReader device = r.object("device");
  device.string("name");
  db.device = device.convert<DatabaseDevice>();
  if (const auto metadata = r.optional_object("metadata")) {
    db.metadata = metadata->convert<DatabaseMetadata>();
  }
  for (const JsonReader& e : r.array("entries")) {
    DatabaseEntry entry = e.convert<DatabaseEntry>();
    if (const auto why = entry_range_problem(entry)) e.fail(why->first, why->second);
    if (db.find(entry.key)) e.fail("duplicate entry for " + entry.key.to_string());
    db.entries_.insert(std::upper_bound(db.entries_.begin(), db.entries_.end(), entry, key_less),
                       entry);
  }
  if (j.contains("measurements")) {
    for (const JsonReader& m : r.array("measurements")) {
      nlohmann::json key = m.object("key").value();
      key["m"] = key["n"] = key["k"] = 1;  // a family: the shapes are in "gflops"
      const EntryKey family = m.field("key").read([&] { return key.get<EntryKey>(); });
      const JsonReader params = m.object("parameters");
      const Configuration parameters =
          params.read([&] { return configuration_from_json(params.value()); });
      std::vector<std::pair<Shape, double>> rows;
      for (const JsonReader& row : m.array("gflops")) {
        const nlohmann::json& v = row.value();
        auto dim = [&](size_t i) {
          if (v.size() != 4 || !v[i].is_number_integer() || v[i].get<int64_t>() < 1) {
            row.fail("expected [M, N, K, GFLOPS] with M, N and K whole numbers of at least 1");
          }
          return v[i].get<int64_t>();
        };
        const Shape shape{dim(0), dim(1), dim(2)};
        if (!v[3].is_number() || !(v[3].get<double>() > 0) || !std::isfinite(v[3].get<double>())) {
          row.fail("expected a positive, finite GFLOPS figure last");
        }
        rows.emplace_back(shape, v[3].get<double>());
      }
      db.add_measurements(family, parameters, rows);
    }
  }
  return db;
}

Database Database::load(const std::string& path) {
  return from_json(read_json_file(path), path);
}

Database Database::load(const std::string& path, const std::string& templates_dir) {
  Database db = load(path);
  check_entry_kernels(db, path, templates_dir);
  return db;
}

void check_entry_kernels(Database& db, const std::string& origin,
                         const std::string& templates_dir) {
  std::map<std::string, std::optional<KernelSpec>> specs;
  std::vector<EntryKey> forbidden;
  for (const auto& e : db.entries()) {
    auto it = specs.find(e.key.kernel);
    if (it == specs.end()) {
      const std::string path = templates_dir + "/" + e.key.kernel + ".json";
      std::error_code ec;
      std::optional<KernelSpec> spec;
      // A name with a path separator would read a file outside the templates folder.
      if (e.key.kernel.find('/') == std::string::npos && std::filesystem::exists(path, ec)) {
        spec = KernelSpec::load(path);
      }
      it = specs.emplace(e.key.kernel, std::move(spec)).first;
    }
    if (!it->second) {
      throw invalid_file(origin, "entry " + e.key.to_string() + ": key.kernel '" + e.key.kernel +
                                     "' is not a kernel template in " + templates_dir);
    }
    for (const auto& [name, value] : e.parameters) {
      if (!it->second->find_parameter(name)) {
        throw invalid_file(origin, "entry " + e.key.to_string() + ": parameters." + name +
                                       " is not a parameter of kernel " + e.key.kernel);
      }
    }
    // Values the template forbids on any device (MWG=7, a failed constraint): no kernel of this
    // template runs them, so the entry cannot be shown, looked up or exported as a tuned
    // configuration. A parameter left out takes the template's default, as everywhere else (the
    // library, a search's warm start): entries written before the template declared it.
    const Context ctx{{"ELEM_BYTES", element_bytes(e.key.precision)}};
    const KernelSpec& spec = *it->second;
    if (const auto why = spec.check(spec.complete(e.parameters), DeviceLimits{}, ctx)) {
      spdlog::warn("{}: entry {} dropped: {} for kernel {}", origin, e.key.to_string(), *why,
                   e.key.kernel);
      forbidden.push_back(e.key);
    }
  }
  for (const auto& key : forbidden) db.erase(key);
}

void check_database_target(const std::string& path, const DatabaseDevice& device,
                           const std::string& templates_dir) {
  check_writable_file(path);
  check_writable_file(database_lock_path(path));
  std::error_code ec;
  if (!std::filesystem::exists(path, ec)) return;
  const Database db = Database::load(path, templates_dir);
  if (!db.device.same_hardware(device)) {
    throw invalid_file(path, "holds results of '" + db.device.name + "' (" + db.device.vendor +
                                 "), not of '" + device.name + "' (" + device.vendor +
                                 "); choose another --db");
  }
}

MergeSummary merge_database_files(const std::string& out, const std::vector<std::string>& inputs,
                                  const std::string& templates_dir) {
  namespace fs = std::filesystem;
  if (inputs.empty()) throw invalid_argument("nothing to merge");
  check_writable_file(out);
  create_parent_directories(out);
  // The lock covers reading, merging and writing: a search that updates `out` meanwhile waits,
  // and its entry is then merged into what this merge wrote instead of being overwritten.
  FileLock lock(database_lock_path(out), FileLock::Wait::kBlock, "database " + out);
  MergeSummary summary;
  std::vector<Database> dbs;
  std::vector<std::string> names = inputs;
  std::error_code ec;
  bool out_listed = false;
  for (const auto& p : inputs) {
    dbs.push_back(Database::load(p, templates_dir));
    summary.input_entries += dbs.back().entries().size();
    if (fs::exists(out, ec) && fs::equivalent(p, out, ec)) out_listed = true;
  }
  // An existing output that is not among the inputs is merged too: a merge never drops entries.
  if (!out_listed && fs::exists(out, ec)) {
    dbs.push_back(Database::load(out, templates_dir));
    names.push_back(out);
    summary.input_entries += dbs.back().entries().size();
    summary.kept_output = true;
  }
  Database merged = merge_databases(dbs, names);
  merged.save_locked(out);
  summary.entries = merged.entries().size();
  summary.databases = dbs.size();
  return summary;
}

namespace {

// Five significant digits: far finer than repeated measurements agree to, and never 0 for a
// positive figure (a tiny shape on a slow device runs at hundredths of a GFLOPS).
double round_figure(double gflops) {
  constexpr int kSignificantDigits = 5;
  const double scale =
      std::pow(10.0, kSignificantDigits - 1 - std::floor(std::log10(std::abs(gflops))));
  return std::round(gflops * scale) / scale;
}

}  // namespace

nlohmann::json Database::to_json() const {
  nlohmann::json entries = nlohmann::json::array();
  for (const auto& e : entries_) entries.push_back(e);
  nlohmann::json j = {{"format", kDatabaseFormat},
                      {"schema_version", schema_version},
                      {"device", device},
                      {"metadata", metadata},
                      {"entries", entries}};
  if (measurements_.empty()) return j;  // files without them stay as they were
  nlohmann::json measured = nlohmann::json::array();
  for (const auto& m : measurements_) {
    nlohmann::json key = m.family;
    key.erase("m");
    key.erase("n");
    key.erase("k");
    nlohmann::json rows = nlohmann::json::array();
    for (const auto& [shape, gflops] : m.gflops) {
      rows.push_back({shape.m, shape.n, shape.k, round_figure(gflops)});
    }
    measured.push_back({{"key", key}, {"parameters", m.parameters}, {"gflops", rows}});
  }
  j["measurements"] = measured;
  return j;
}

namespace {

void check_measured_gflops(const EntryKey& family, const Shape& shape, double gflops) {
  if (!(gflops > 0) || !std::isfinite(gflops)) {
    throw invalid_argument(fmt::format("measurement of {} at {}: {} GFLOPS is no figure",
                                       family.kernel, shape.to_string(), gflops));
  }
}

// Adds a figure to rows sorted by shape; the faster of two figures of one shape is kept.
void add_measured_row(std::vector<std::pair<Shape, double>>& rows, const Shape& shape,
                      double gflops) {
  auto row = std::lower_bound(rows.begin(), rows.end(), shape, [](const auto& a, const Shape& s) {
    return std::tie(a.first.m, a.first.n, a.first.k) < std::tie(s.m, s.n, s.k);
  });
  if (row != rows.end() && row->first == shape) {
    row->second = std::max(row->second, gflops);
  } else {
    rows.insert(row, {shape, gflops});
  }
}

}  // namespace

MeasuredConfiguration& Database::measured(const EntryKey& family, const Configuration& parameters) {
  EntryKey key = family;
  key.shape = Shape{1, 1, 1};
  auto it = std::find_if(measurements_.begin(), measurements_.end(), [&](const auto& m) {
    return m.family == key && m.parameters == parameters;
  });
  if (it != measurements_.end()) return *it;
  MeasuredConfiguration m;
  m.family = key;
  m.parameters = parameters;
  const auto at = std::upper_bound(measurements_.begin(), measurements_.end(), m,
                                   [](const auto& a, const auto& b) {
                                     if (!(a.family == b.family)) return a.family < b.family;
                                     return to_string(a.parameters) < to_string(b.parameters);
                                   });
  return *measurements_.insert(at, std::move(m));
}

void Database::add_measurement(const EntryKey& family, const Configuration& parameters,
                               const Shape& shape, double gflops) {
  check_measured_gflops(family, shape, gflops);
  add_measured_row(measured(family, parameters).gflops, shape, gflops);
}

void Database::add_measurements(const EntryKey& family, const Configuration& parameters,
                                const std::vector<std::pair<Shape, double>>& rows) {
  for (const auto& [shape, gflops] : rows) check_measured_gflops(family, shape, gflops);
  if (rows.empty()) return;
  // Files list the rows sorted by shape, so each lands at the end.
  auto& to = measured(family, parameters).gflops;
  for (const auto& [shape, gflops] : rows) add_measured_row(to, shape, gflops);
}

void Database::save(const std::string& path) {
  create_parent_directories(path);
  FileLock lock(database_lock_path(path), FileLock::Wait::kBlock, "database " + path);
  save_locked(path);
}

void Database::save_locked(const std::string& path) {
  metadata.updated = iso_utc_now();
  if (metadata.created.empty()) metadata.created = metadata.updated;
  metadata.gemmtune_version = version();
  create_parent_directories(path);
  write_json_atomic(path, to_json());
  remove_stale_temporaries(path);
}

const DatabaseEntry* Database::find(const EntryKey& key) const {
  DatabaseEntry probe;
  probe.key = key;
  auto it = std::lower_bound(entries_.begin(), entries_.end(), probe, key_less);
  return it != entries_.end() && it->key == key ? &*it : nullptr;
}

PutOutcome Database::put(const DatabaseEntry& entry, bool replace) {
  // JSON has no infinity or NaN: such a figure would be written as null and never read back;
  // a negative or zero one would be refused by the next reader.
  if (const auto why = entry_range_problem(entry)) {
    throw invalid_argument("database entry " + entry.key.to_string() + ": " + why->first + " " +
                           why->second);
  }
  auto it = std::lower_bound(entries_.begin(), entries_.end(), entry, key_less);
  if (it == entries_.end() || !(it->key == entry.key)) {
    entries_.insert(it, entry);
    return PutOutcome::kAdded;
  }
  if (replace || entry.faster_than(*it)) {
    *it = entry;
    return PutOutcome::kReplaced;
  }
  return PutOutcome::kKeptExisting;
}

bool Database::erase(const EntryKey& key) {
  DatabaseEntry probe;
  probe.key = key;
  auto it = std::lower_bound(entries_.begin(), entries_.end(), probe, key_less);
  if (it == entries_.end() || !(it->key == key)) return false;
  entries_.erase(it);
  return true;
}

std::vector<Database::Match> Database::ranked(const EntryKey& key) const {
  std::vector<Match> out;
  auto lg = [](int64_t v) { return std::log(static_cast<double>(std::max<int64_t>(v, 1))); };
  for (const auto& e : entries_) {
    if (!e.key.same_family(key) || e.status != Status::kOk) continue;
    const double dm = lg(e.key.shape.m) - lg(key.shape.m);
    const double dn = lg(e.key.shape.n) - lg(key.shape.n);
    const double dk = lg(e.key.shape.k) - lg(key.shape.k);
    out.push_back({&e, e.key.shape == key.shape, std::sqrt(dm * dm + dn * dn + dk * dk)});
  }
  std::stable_sort(out.begin(), out.end(),
                   [](const Match& a, const Match& b) { return a.distance < b.distance; });
  return out;
}

Database::Match Database::nearest(const EntryKey& key) const {
  const std::vector<Match> all = ranked(key);
  return all.empty() ? Match{} : all.front();
}

PutOutcome Database::update(const std::string& path, const DatabaseDevice& device,
                            const DatabaseEntry& entry, bool replace) {
  create_parent_directories(path);
  FileLock lock(database_lock_path(path), FileLock::Wait::kBlock, "database " + path);
  Database db;
  std::error_code ec;
  if (std::filesystem::exists(path, ec)) {
    db = load(path);  // a file that cannot be read throws here, before anything is written
    if (!db.device.same_hardware(device)) {
      throw invalid_file(path, "holds results of '" + db.device.name + "' (" + db.device.vendor +
                                   "), not of '" + device.name + "' (" + device.vendor + ")");
    }
    if (const auto differ = db.device.driver_difference(device); !differ.empty()) {
      spdlog::warn("{}: measured now with {}; the device record is updated", path, differ);
    }
  }
  const std::string created = db.metadata.created;
  db.device = device;
  db.metadata.created = created;
  const PutOutcome outcome = db.put(entry, replace);
  if (outcome != PutOutcome::kKeptExisting) db.save_locked(path);
  return outcome;
}

PutOutcome Database::update(const std::string& path, const DeviceInfo& device,
                            const DatabaseEntry& entry, bool replace) {
  return update(path, DatabaseDevice::from(device), entry, replace);
}

std::string Database::default_path(const DeviceInfo& device) {
  return std::string(kUserOutputFolder) + "/" + device.id() + ".json";
}

Database merge_databases(const std::vector<Database>& inputs,
                         const std::vector<std::string>& names) {
  if (inputs.empty()) throw invalid_argument("nothing to merge");
  Database out;
  out.device = inputs.front().device;
  for (size_t i = 0; i < inputs.size(); ++i) {
    const auto& in = inputs[i];
    const std::string name = i < names.size() ? names[i] : "input " + std::to_string(i + 1);
    if (!in.device.same_hardware(out.device)) {
      throw invalid_file(name, "holds results of '" + in.device.name + "', not of '" +
                                   out.device.name + "' like the first input; refusing to merge");
    }
    if (const auto differ = out.device.driver_difference(in.device); !differ.empty()) {
      spdlog::warn(
          "{}: measured with {} (the first input's); merged anyway, though timings of "
          "different drivers may differ",
          name, differ);
    }
    // Keep the earliest creation date of the inputs.
    if (!in.metadata.created.empty() &&
        (out.metadata.created.empty() || in.metadata.created < out.metadata.created)) {
      out.metadata.created = in.metadata.created;
    }
    for (const auto& e : in.entries()) out.put(e, false);
    for (const auto& m : in.measurements()) {
      for (const auto& [shape, gflops] : m.gflops) {
        out.add_measurement(m.family, m.parameters, shape, gflops);
      }
    }
  }
  return out;
}

std::string utc_now(const char* format) {
  const std::time_t t = std::time(nullptr);
  std::tm tm{};
  ::gmtime_r(&t, &tm);
  char buf[64];
  std::strftime(buf, sizeof(buf), format, &tm);
  return buf;
}

std::string iso_utc_now() {
  return utc_now("%Y-%m-%dT%H:%M:%SZ");
}

}  // namespace gemmtune
