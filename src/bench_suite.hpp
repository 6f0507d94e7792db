// The side-by-side benchmark suite: for each shape of a suite, gemmtune's best tuned
// configuration against CLBlast's stock Gemm on the same buffers, in the same process, with calls
// interleaved so that both see the same clocks and temperatures. Both outputs are verified
// against an Eigen reference once per shape. Optionally a fused bias+ReLU row per shape, and a
// cuBLAS column merged from scripts/bench-cublas.py.
//
// Timing: "wall" is the whole call as a user sees it, from the first enqueue to the return of
// clFinish on a host steady clock (every kernel of the call included). "kernel" is gemmtune's
// main kernel alone, from profiling events; CLBlast gets the whole-call time only.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "src/configuration.hpp"
#include "src/database.hpp"
#include "src/device.hpp"
#include "src/problem.hpp"
#include "src/result.hpp"

namespace gemmtune {

struct DeviceProfile;

constexpr const char* kBenchSuiteFormat = "gemmtune-bench-suite";
constexpr int kBenchSuiteSchemaVersion = 1;
// The "format" field of scripts/bench-cublas.py's --json output.
constexpr const char* kCublasBenchFormat = "gemmtune-cublas-bench";

// The default suite (FP32, row-major, NN).
std::vector<Shape> default_suite_shapes();
// The kernels the suite draws configurations from, in order of preference on a tie.
std::vector<std::string> default_suite_kernels();

// True when this build links CLBlast.
bool clblast_linked();

// A tuned database and the name it is reported under (normally its path).
struct NamedDatabase {
  std::string name;
  Database db;
};

// Where the configuration run for a shape comes from.
struct Candidate {
  std::string kernel;
  Configuration parameters;
  std::string origin;    // "exact", "nearest" or "defaults" (template defaults, untuned)
  Shape tuned_shape;     // the shape the entry was tuned for
  std::string database;  // the database holding the entry; "" for defaults
  double recorded_gflops = 0;
  double distance = 0;  // log-space distance of tuned_shape from the benchmarked shape
};

// Candidates for one FP32 row-major NN shape among `kernels`: when any database has an entry for
// the exact shape, only the fastest such entry (recorded GFLOPS, across databases and kernels);
// otherwise the nearest tuned shape's entry of each kernel that has one (these were tuned for
// another shape, so the suite measures them to choose). Empty when no database has an entry of
// any of the kernels.
std::vector<Candidate> suite_candidates(const std::vector<NamedDatabase>& databases,
                                        const std::vector<std::string>& kernels,
                                        const Shape& shape);

// One side of a comparison (gemmtune or CLBlast).
struct SideResult {
  bool available = false;      // false: not run ("n/a"), e.g. CLBlast not linked
  std::string status = "n/a";  // "ok", "wrong_result", "failed" or "n/a"
  std::string message;         // why, when not ok or not available
  bool verified = false;
  std::string checked;  // what verification covered, e.g. "all 4096 outputs"
  double max_error = 0, tolerance = 0;
  TimingStats wall;          // whole call; wall.kernel_median_ms is the main kernel (gemmtune only)
  double gflops = 0;         // from the median whole-call time
  double kernel_gflops = 0;  // from the median main-kernel time (gemmtune only)

  bool ok() const { return available && status == "ok"; }
};

// A candidate's short measurement when several had to be compared.
struct CandidateTrial {
  Candidate candidate;
  std::string status;  // "ok", "wrong_result" or "failed"
  std::string message;
  double median_ms = 0;
  double gflops = 0;
};

struct SuiteRow {
  Shape shape;
  bool epilogue = false;            // fused bias+ReLU (gemmtune) against Gemm + a bias+ReLU kernel
  std::optional<Candidate> chosen;  // none when no configuration could be run
  std::vector<CandidateTrial> trials;
  SideResult gemmtune, clblast;
  std::optional<double> ratio;  // gemmtune GFLOPS / CLBlast GFLOPS, both from whole-call time
  std::optional<double> cublas_gflops;
  std::optional<double> cublas_ratio;  // gemmtune GFLOPS / cuBLAS GFLOPS
};

struct SuiteReport {
  DeviceInfo device;
  std::string date;     // ISO 8601 UTC
  std::string command;  // the command line that produced it
  std::string gemmtune_version;
  std::vector<std::string> databases;
  bool clblast = false;      // the CLBlast column was run
  std::string clblast_note;  // why not, when not
  int reps = 0, warmup = 0;
  std::string cublas_source;  // the merged cuBLAS file and its device, when merged
  std::vector<SuiteRow> rows;

  // Every available side of every row ran and verified.
  bool all_ok() const;
};

struct BenchSuiteOptions {
  std::vector<Shape> shapes;         // default_suite_shapes() when empty
  std::vector<std::string> kernels;  // default_suite_kernels() when empty
  bool epilogue = false;
  bool clblast = true;  // false: the CLBlast column says n/a even when linked
  int reps = 20;        // interleaved timed calls of each side
  int warmup = 3;       // interleaved untimed calls of each side
  int select_reps = 3;  // timed calls of each candidate when several are compared
  uint64_t seed = 42;   // input data
  std::string templates_dir;
  std::string cache_dir;  // binary cache ("" default folder, "none" disables)
  // Shapes with M*N*K above this are verified on a fixed-seed sample of rows (all columns).
  int64_t full_check_limit = int64_t{1} << 31;
  int sample_rows = 128;
  std::string command;  // recorded in the report
};

// Runs the suite on `device`. Failures of one row (a configuration that does not build, a
// wrong result, a CLBlast error) are recorded in that row and the suite goes on; bad options
// throw Error.
SuiteReport run_bench_suite(const Device& device, const DeviceProfile* profile,
                            const std::vector<NamedDatabase>& databases,
                            const BenchSuiteOptions& options);

// cuBLAS timings read from scripts/bench-cublas.py's --json output.
struct CublasResults {
  std::string source;  // the file and the device, torch and CUDA it reports
  std::map<std::pair<Shape, bool>, double> gflops;  // by shape and epilogue
};
// Throws Error(kInvalidFile) naming `origin` for a document of another kind or a bad result.
CublasResults read_cublas_results(const nlohmann::json& cublas, const std::string& origin);
// Adds the cuBLAS column to the rows whose shape and epilogue were measured.
void merge_cublas(SuiteReport& report, const CublasResults& cublas);

// A Markdown document for results/: device, driver, date and command at the top, then the table,
// the configurations and any failures.
std::string suite_markdown(const SuiteReport& report);
// An aligned plain-text table for the terminal.
std::string suite_text(const SuiteReport& report);

void to_json(nlohmann::json& j, const Candidate& c);
void from_json(const nlohmann::json& j, Candidate& c);
void to_json(nlohmann::json& j, const SideResult& s);
void from_json(const nlohmann::json& j, SideResult& s);
void to_json(nlohmann::json& j, const CandidateTrial& t);
void from_json(const nlohmann::json& j, CandidateTrial& t);
void to_json(nlohmann::json& j, const SuiteRow& r);
void from_json(const nlohmann::json& j, SuiteRow& r);
void to_json(nlohmann::json& j, const SuiteReport& r);
void from_json(const nlohmann::json& j, SuiteReport& r);

}  // namespace gemmtune
