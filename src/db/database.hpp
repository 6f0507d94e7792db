// SPDX-License-Identifier: Apache-2.0
// The tuned database: one JSON file per device holding, for every tuned problem (kernel,
// precision, order, layout, batch, shape), the fastest configuration found and how it was found.
// Writers go through Database::update, which locks, re-reads and writes atomically, so that
// several tuning runs can share one file without losing each other's results.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "src/core/configuration.hpp"
#include "src/core/problem.hpp"
#include "src/core/result.hpp"

namespace gemmtune {

// Where a user's outputs go by default (search databases, search folders, the quick start): a
// folder of the current directory that no build reads and git ignores.
inline constexpr const char* kUserOutputFolder = "gemmtune-results";

struct DeviceInfo;

// Bumped whenever a reader of the previous version would misread a newer file.
constexpr int kDatabaseSchemaVersion = 1;
// The "format" field that marks a file as a gemmtune database.
constexpr const char* kDatabaseFormat = "gemmtune-database";

// Which device a database belongs to.
struct DatabaseDevice {
  std::string id;  // DeviceInfo::id(), also the default file name
  std::string name;
  std::string vendor;
  std::string type;  // "gpu", "cpu", ...
  std::string platform;
  std::string platform_version;
  std::string driver_version;
  std::string opencl_version;  // CL_DEVICE_VERSION
  std::string opencl_c_version;
  std::string profile;  // matched devices/ profile, "generic" when none
  uint32_t compute_units = 0;
  uint32_t max_clock_mhz = 0;

  static DatabaseDevice from(const DeviceInfo& info);
  // Same hardware (name and vendor); the driver may differ.
  bool same_hardware(const DatabaseDevice& other) const;
  // "driver 'B' instead of 'A'" when `other` records another driver version, else "": a new
  // driver changes timings, so whoever merges or compares the two is told.
  std::string driver_difference(const DatabaseDevice& other) const;
};

struct DatabaseMetadata {
  std::string gemmtune_version;
  std::string created;  // ISO 8601 UTC
  std::string updated;
};

// What identifies a tuned problem.
struct EntryKey {
  std::string kernel = "xgemm";
  Precision precision = Precision::kFP32;
  Order order = Order::kRowMajor;
  std::string layout = "NN";  // op(A), op(B): NN, NT, TN, TT
  int64_t batch = 1;
  // Where the matrices of a batch lie. A configuration tuned for one layout is not the best
  // (or may not even run) for the other, so the layout is part of the key; for batch 1 it means
  // nothing and is always kStrided, so that a single GEMM has one key whatever was asked.
  BatchLayout batch_layout = BatchLayout::kStrided;
  Shape shape;
  // The fused epilogue: it changes the kernel that runs. Absent from files written before it was
  // part of the key, which means none.
  Epilogue epilogue;

  static EntryKey of(const std::string& kernel, const Problem& problem);
  // The problem of this key, its kernel aside (alpha 1, beta 0; the caller sets scaling if it has
  // one).
  Problem problem() const;
  // "xgemm fp32 row NN b1 1024x1024x1024"; a batch names its layout: "... b8 offsets 32x32x32",
  // an epilogue follows the shape: "... 32x32x32 bias,relu"
  std::string to_string() const;
  // The problem's identity without scaling (ProblemKey), beside the kernel: entries compare and
  // sort by it.
  bool operator==(const EntryKey& o) const;
  bool operator<(const EntryKey& o) const;
  // Same kernel and problem family (kFamily): only the shape differs.
  bool same_family(const EntryKey& o) const;
};

// How an entry was found.
struct Provenance {
  std::string strategy;  // "exhaustive", "random", "bench", ...
  int64_t evaluations = 0;
  uint64_t seed = 0;
  std::string date;  // ISO 8601 UTC
  std::string gemmtune_version;
  std::string space;  // the space name searched
};

// What the entry's problem runs at without the tuned configuration: CLBlast's routine or the
// fallback kernel (the xgemm_direct template defaults), measured on the same device. Optional in
// files ("baseline": {"gflops": 1234.5, "by": "clblast"}); the selection of a configuration for an
// untuned shape predicts it there and takes the safe path when gemmtune is predicted to lose.
struct Baseline {
  double gflops = 0;  // positive
  std::string by;     // what was measured: "clblast", "xgemm_direct defaults", ...
};

struct DatabaseEntry {
  EntryKey key;
  Configuration parameters;
  Status status = Status::kOk;  // not ok only in a bench output that failed to re-measure
  std::string message;          // why, when status is not ok
  double gflops = 0;
  TimingStats time;
  double max_error = 0;
  double tolerance = 0;
  double alpha = 1.0, beta = 0.0;
  ResourceUsage usage;
  Provenance found;
  std::optional<Baseline> baseline;

  // An entry from a search's best result.
  static DatabaseEntry from_result(const std::string& kernel, const Problem& problem,
                                   const Result& best, const Provenance& found);
  // Strictly faster than `other` (a failed entry is never faster).
  bool faster_than(const DatabaseEntry& other) const;
};

// A configuration measured at many shapes of one problem family, beside the entries: what a
// cross-measurement (`gemmtune search --space-from DB --strategy exhaustive --workload GRID`,
// then `gemmtune db add-measurements`) found, so that the chooser compares configurations by
// what they ran at the shapes nearest an untuned one. Optional in files ("measurements": [{"key":
// the family (an entry's key without m, n, k), "parameters": {...}, "gflops": [[m, n, k,
// GFLOPS], ...]}]).
struct MeasuredConfiguration {
  EntryKey family;  // its shape is unused (1x1x1)
  Configuration parameters;
  std::vector<std::pair<Shape, double>> gflops;  // one per shape, sorted by shape
};

// What Database::put and Database::update did with an entry.
enum class PutOutcome { kAdded, kReplaced, kKeptExisting };
std::string to_string(PutOutcome o);

class Database {
 public:
  int schema_version = kDatabaseSchemaVersion;
  DatabaseDevice device;
  DatabaseMetadata metadata;

  // Reads and validates a database. A missing, corrupt, truncated or foreign file throws
  // Error(kInvalidFile) naming the file, the position and what was expected.
  static Database load(const std::string& path);
  // Also refuses entries whose kernel has no template in `templates_dir` or whose parameters the
  // template does not declare, and drops those it forbids (check_entry_kernels): what a reader
  // would pass on to a kernel.
  static Database load(const std::string& path, const std::string& templates_dir);
  static Database from_json(const nlohmann::json& j, const std::string& origin);
  nlohmann::json to_json() const;
  // Writes atomically (temporary file, then rename) under the database's lock (FileLock on
  // database_lock_path), keeping the file's mode; sets metadata.updated. A file without write
  // permission is refused (Error kInvalidFile), never replaced.
  void save(const std::string& path);
  // save() for a caller that already holds the lock (a read-modify-write such as update()).
  void save_locked(const std::string& path);

  // Entries, sorted by key.
  const std::vector<DatabaseEntry>& entries() const { return entries_; }
  const DatabaseEntry* find(const EntryKey& key) const;
  // Adds `entry`, or replaces the entry of the same key when `entry` is faster or `replace`.
  PutOutcome put(const DatabaseEntry& entry, bool replace);
  bool erase(const EntryKey& key);

  // Configurations measured at many shapes (MeasuredConfiguration), sorted by family and
  // parameters.
  const std::vector<MeasuredConfiguration>& measurements() const { return measurements_; }
  // Records that `parameters` of `family`'s kernel ran `family` at `shape` at `gflops` (positive
  // and finite; the faster of two figures of one shape is kept).
  void add_measurement(const EntryKey& family, const Configuration& parameters, const Shape& shape,
                       double gflops);
  // The same for every (shape, GFLOPS) of `rows` (each checked as add_measurement checks it):
  // the configuration is looked up once, so that loading a database's measurements takes time
  // in proportion to its rows, not to its rows times its configurations.
  void add_measurements(const EntryKey& family, const Configuration& parameters,
                        const std::vector<std::pair<Shape, double>>& rows);
  void clear_measurements() { measurements_.clear(); }

  // The entry of the same family as `key` (EntryKey::same_family) whose shape is nearest
  // in log space (exact match first). Entries with a failed status are ignored.
  struct Match {
    const DatabaseEntry* entry = nullptr;
    bool exact = false;
    double distance = 0;  // Euclidean distance of (log M, log N, log K)
  };
  Match nearest(const EntryKey& key) const;
  // Every entry of `key`'s family, nearest first (as nearest() measures it; equal distances in
  // the order of the entries).
  std::vector<Match> ranked(const EntryKey& key) const;

  // Under an exclusive lock on `path`.lock: re-reads `path` (absent = a new database for
  // `device`), puts `entry` and writes atomically when anything changed. A database of other
  // hardware, or a file that cannot be read as a database, is refused and left untouched.
  static PutOutcome update(const std::string& path, const DatabaseDevice& device,
                           const DatabaseEntry& entry, bool replace);
  static PutOutcome update(const std::string& path, const DeviceInfo& device,
                           const DatabaseEntry& entry, bool replace);

  // gemmtune-results/<device id>.json: user outputs go to gemmtune-results/ of the current
  // folder, which no build reads (the shipped databases are results/databases/ of the source).
  static std::string default_path(const DeviceInfo& device);

 private:
  // `family`'s configuration `parameters` among the measurements, added (with no rows) if absent.
  MeasuredConfiguration& measured(const EntryKey& family, const Configuration& parameters);

  std::vector<DatabaseEntry> entries_;
  std::vector<MeasuredConfiguration> measurements_;
};

// Throws Error(kInvalidFile) naming `origin` and the entry when an entry's kernel has no template
// in `templates_dir` or one of its parameters is not declared by that template; drops, with a
// warning, entries whose values the template forbids on any device (a value it does not list, a
// failed constraint; a parameter left out takes the template's default).
void check_entry_kernels(Database& db, const std::string& origin, const std::string& templates_dir);

// Before a search measures anything: `path` (and its lock file) can be written, and an existing
// file is a valid database of `device`'s hardware with known kernels. Throws Error(kInvalidFile).
void check_database_target(const std::string& path, const DatabaseDevice& device,
                           const std::string& templates_dir);

struct MergeSummary {
  size_t entries = 0;        // in the written database
  size_t input_entries = 0;  // in all databases read
  size_t databases = 0;      // read, the existing output included
  bool kept_output = false;  // `out` existed, was not an input, and was merged as well
};
// `db merge`: under the lock of `out`, reads every input (and `out` itself when it exists), keeps
// the fastest entry per key and writes `out` atomically. Every input is validated with
// Database::load(path, templates_dir); all must describe the same hardware.
MergeSummary merge_database_files(const std::string& out, const std::vector<std::string>& inputs,
                                  const std::string& templates_dir);

// Keeps the fastest entry per key of all `inputs` (the first one on a tie) and every measurement
// (MeasuredConfiguration; the faster figure of a configuration and shape). All inputs must
// describe the same hardware; the result takes the device of the first input.
Database merge_databases(const std::vector<Database>& inputs,
                         const std::vector<std::string>& names);

// The current time as ISO 8601 UTC ("2026-01-31T12:00:00Z").
std::string iso_utc_now();
// The current UTC time in a strftime `format` (iso_utc_now: "%Y-%m-%dT%H:%M:%SZ").
std::string utc_now(const char* format);

void to_json(nlohmann::json& j, const DatabaseDevice& d);
void from_json(const nlohmann::json& j, DatabaseDevice& d);
void to_json(nlohmann::json& j, const DatabaseMetadata& m);
void from_json(const nlohmann::json& j, DatabaseMetadata& m);
void to_json(nlohmann::json& j, const EntryKey& k);
void from_json(const nlohmann::json& j, EntryKey& k);
void to_json(nlohmann::json& j, const Provenance& p);
void from_json(const nlohmann::json& j, Provenance& p);
void to_json(nlohmann::json& j, const Baseline& b);
void from_json(const nlohmann::json& j, Baseline& b);
void to_json(nlohmann::json& j, const DatabaseEntry& e);
void from_json(const nlohmann::json& j, DatabaseEntry& e);

}  // namespace gemmtune
