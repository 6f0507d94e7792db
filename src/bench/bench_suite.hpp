// SPDX-License-Identifier: Apache-2.0
// The side-by-side benchmark suite: for each shape of a suite, in each asked precision and
// batch, gemmtune's best tuned configuration against CLBlast's stock routine (Gemm for one GEMM,
// GemmStridedBatched or GemmBatched for a batch) on the same buffers, in the same process, with
// calls interleaved so that both see the same clocks and temperatures. gemmtune runs twice: direct
// (through src/eval's GemmCall) and through libgemmtune's public calls (gemmtune::Gemm and its
// forms, with the suite's databases as the user database: what an application gets). Both run the
// configuration the library's chooser (src/select/chooser.hpp) picks from the same databases; where
// that configuration fails in the direct column, the row says so (the library would go on to its
// next choice). Every output is verified against the Eigen reference of src/verify once per
// row. Optionally a fused bias+ReLU row per FP32 shape, and a cuBLAS column merged from
// scripts/bench-cublas.py.
//
// Timing, every side on the same clocks (src/eval/queued_clock.hpp): "GPU" is the figure of
// record, N calls queued behind a busy-wait kernel, from its end to the last call's end by the
// device's events, per call (the clock scripts/bench-cublas.py times cuBLAS with, same N rule);
// "wall" is the whole call as a user sees it, from the enqueue to the return of clFinish on the
// host clock; "host" is a call's host cost, N calls queued with no busy GPU, host clock per call.
// cuBLAS comes with all three, and each is compared with its own kind.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <tuple>
#include <vector>

#include <nlohmann/json.hpp>

#include "src/core/configuration.hpp"
#include "src/core/problem.hpp"
#include "src/core/result.hpp"
#include "src/db/database.hpp"
#include "src/device/device.hpp"
#include "src/select/selection.hpp"
#include "src/verify/reference.hpp"

namespace gemmtune {

struct DeviceProfile;

constexpr const char* kBenchSuiteFormat = "gemmtune-bench-suite";
// 2: rows carry precision, batch and batch_layout (a version-1 reader would take every row for a
// single FP32 GEMM). Version-1 documents still load, as FP32 single GEMMs. 3: cuBLAS as
// cublas_call_* (whole call) and cublas_device_* (CUDA events); the "cublas_gflops" of earlier
// versions, CUDA events, loads as the device figure.
// 4: each side's "gpu" (the queued GPU clock) and "host_ms" (host cost per call), where version 3
// had gemmtune's "kernel_gflops" (one call's kernels by their events), which loads as its GPU rate.
constexpr int kBenchSuiteSchemaVersion = 4;
// The "format" field of scripts/bench-cublas.py's --json output.
constexpr const char* kCublasBenchFormat = "gemmtune-cublas-bench";

// One shape of a suite and how many GEMMs of it one call computes.
struct SuiteCase {
  Shape shape;
  int64_t batch = 1;
};

// The default suite (row-major, NN, single GEMMs), the "standard" suite.
std::vector<Shape> default_suite_shapes();
// The "memory" suite: matrix times vector and matrices times a few vectors (M or N of 1, 8 or 16,
// the other two 4096 or 8192), both ways round: the shapes of decoding with a language model.
std::vector<Shape> memory_suite_shapes();
// The "batched" suite: many small GEMMs per call, where launch overhead and batch addressing
// matter more than the tile: 1024 GEMMs of 32^3 and 64 of 256^3.
std::vector<SuiteCase> batched_suite_cases();
// The cases of a named suite ("standard" or "batched"); throws Error(kInvalidArgument) naming
// the known suites for another name.
std::vector<SuiteCase> named_suite(const std::string& name);
// Random shapes for a suite (suite_random.cpp): each of M, N and K drawn log-uniformly from
// [min_dim, max_dim] by a fixed generator, so that a seed gives the same shapes with every
// compiler and standard library: std::mt19937_64 seeded with `seed` (its output is fixed by the
// C++ standard), one draw per dimension in the order M, N, K of each shape in turn, each draw x
// turned into u = (x >> 11) * 2^-53 (uniform in [0, 1)) and the dimension
// floor(exp(log(min_dim) + u * (log(max_dim + 1) - log(min_dim)))), clamped to [min_dim,
// max_dim]. Throws Error(kInvalidArgument) for a count below 1 or a range that is empty, starts
// below 1 or reaches past 46340 (a square matrix of that size is the kernels' 2^31-element limit).
struct RandomShapes {
  int64_t count = 0;
  uint64_t seed = 42;
  int64_t min_dim = 32;
  int64_t max_dim = 8192;
};
std::vector<Shape> random_suite_shapes(const RandomShapes& r);

// The kernels the suite checks for the rows asked (batch layouts, the epilogue).
std::vector<std::string> default_suite_kernels();

// True when this build links CLBlast.
bool clblast_linked();

// A tuned database and the name it is reported under (normally its path).
struct NamedDatabase {
  std::string name;
  Database db;
};

// Where the configuration run for a shape comes from: the library chooser's first choice.
struct Candidate {
  std::string kernel;
  Configuration parameters;
  // "exact", "model" (the selection model's pick for an untuned shape), "safe path" (the
  // xgemm_direct defaults, a baseline being predicted to win), "offline choice" (the device
  // profile's starting configuration) or "defaults" (template defaults, no entry); "nearest" in
  // reports written before the model.
  std::string origin;
  Shape tuned_shape;     // the shape the entry was tuned for
  std::string database;  // the database holding the entry (the profile for an offline choice)
  double recorded_gflops = 0;
  double distance = 0;          // log-space distance of tuned_shape from the benchmarked shape
  double predicted_gflops = 0;  // the model's prediction for the benchmarked shape (0: none)
  std::string reason;           // why, in one line
};

// What libgemmtune ran for a row, as gemmtune::Explain says it.
struct LibraryChoice {
  std::string kernel;
  std::string parameters;  // "MWG=64,NWG=64,..."
  std::string source;      // "user database", "compiled-in database", "compiled-in default", ...
  std::string database;    // the database it came from, or "template defaults"
  std::string entry;       // the entry used ("" for defaults)
  bool exact = false;      // the entry's shape is the row's
  std::vector<std::string> notes;  // entries and databases passed over, and why
};

// One side of a comparison (gemmtune direct, the library or CLBlast).
struct SideResult {
  // false: not run ("n/a"), e.g. CLBlast not linked, or a precision the device or CLBlast does
  // not have; `message` says why. Not a failure.
  bool available = false;
  std::string status = "n/a";  // "ok", "wrong_result", "failed" or "n/a"
  std::string message;         // why, when not ok or not available
  bool verified = false;
  std::string checked;  // what verification covered, e.g. "all 4096 outputs"
  double max_error = 0, tolerance = 0;
  TimingStats wall;       // whole call
  double gflops = 0;      // from the median whole-call time
  TimingStats gpu;        // the GPU clock, per call (gpu.clock says which clock it came to be)
  double gpu_gflops = 0;  // from the median GPU time
  double host_ms = 0;     // host cost per call: the median of N queued calls on an idle GPU

  bool ok() const { return available && status == "ok"; }
};

// A candidate's short measurement when several had to be compared (reports of earlier versions,
// which timed several default kernels; the suite now runs the library's one choice).
struct CandidateTrial {
  Candidate candidate;
  std::string status;  // "ok", "wrong_result" or "failed"
  std::string message;
  double median_ms = 0;
  double gflops = 0;
};

// A row with too little arithmetic per byte to be bound by it: where the least the call must move
// (every operand read once, C written once and read too when beta is not 0, the bias) takes longer
// at the device's memory bandwidth than the arithmetic at its peak. Its rates are bytes per
// second, against two limits measured or stated for the same run: a device-to-device copy moving
// as many bytes (half read, half written), timed as a whole call interleaved with the row's
// sides, so that launch and finish cost the copy what they cost a GEMM; and the profile's
// bandwidth figure.
struct MemoryBound {
  double bytes = 0;
  double copy_ms = 0;      // median whole-call time of the copy
  double profile_gbs = 0;  // the device profile's memory_bandwidth_gbs (0: not stated)
  std::string rule;        // why the row counts as memory-bound
  // GB/s of a call of the row that took `ms`.
  double gbs(double ms) const { return ms > 0 ? bytes / ms * 1e-6 : 0; }
};

// Whether `p` is memory-bound on the device (see MemoryBound): by the profile's peak and bandwidth
// where it states both, else when M or N is at most 16. `rule` says which applied; nullopt when
// compute-bound.
std::optional<MemoryBound> memory_bound(const Problem& p, const DeviceProfile* profile,
                                        const DeviceInfo& device);

struct SuiteRow {
  Shape shape;
  Precision precision = Precision::kFP32;
  int64_t batch = 1;  // GEMMs of `shape` per call; GFLOPS count all of them
  BatchLayout batch_layout = BatchLayout::kStrided;  // always kStrided for batch 1
  bool epilogue = false;            // fused bias+ReLU (gemmtune) against Gemm + a bias+ReLU kernel
  std::optional<Candidate> chosen;  // none when no configuration could be run
  std::vector<CandidateTrial> trials;
  SideResult gemmtune, clblast;
  std::optional<double> ratio;  // gemmtune GFLOPS / CLBlast GFLOPS, both from whole-call time
  SideResult library;           // the row through libgemmtune's public calls
  std::optional<LibraryChoice> library_choice;
  std::optional<double> library_ratio;  // library GFLOPS / CLBlast GFLOPS
  // The same on the GPU clock.
  std::optional<double> gpu_ratio, library_gpu_ratio;
  // CLBlast with the parameters of --clblast-params, interleaved with its stock parameters.
  SideResult clblast_tuned;
  std::optional<double> clblast_tuned_gain;  // tuned CLBlast GFLOPS / stock CLBlast GFLOPS
  // cuBLAS (scripts/bench-cublas.py): whole-call GFLOPS (host clock to the return of the
  // synchronization, as gemmtune's; none from a file that lacks them) and device GFLOPS (CUDA
  // events around the call).
  std::optional<double> cublas_gflops, cublas_device_gflops;
  std::optional<double> cublas_ratio;         // gemmtune / cuBLAS, whole call against whole call
  std::optional<double> cublas_device_ratio;  // gemmtune / cuBLAS, GPU clock against GPU clock
  std::optional<double> library_cublas_device_ratio;  // the library / cuBLAS on the GPU clock
  std::optional<double> cublas_host_ms;               // cuBLAS's host cost per call
  std::optional<MemoryBound> memory;                  // set for memory-bound rows (see MemoryBound)

  // The row's problem: row-major NN, alpha 1, beta 0, in its precision and batch.
  Problem problem() const;
  // "64x64x64 fp64", "32x32x32 fp32 b1024 offsets", "... bias+ReLU": names the row in messages.
  std::string label() const;
};

struct SuiteReport {
  DeviceInfo device;
  std::string date;     // ISO 8601 UTC
  std::string command;  // the command line that produced it
  std::string gemmtune_version;
  std::vector<std::string> databases;
  bool clblast = false;       // the CLBlast column was run
  std::string clblast_note;   // why not, when not
  std::string clblast_tuned;  // the tuned CLBlast column's parameters and file ("" none)
  int reps = 0, warmup = 0;
  std::string cublas_source;     // the merged cuBLAS file and its device, when merged
  std::string library_database;  // what the library had as its user database ("" none)
  // Per database with entries this build's templates no longer accept, passed over by the chooser
  // as stale: how many, and the first one's reason. A run with such entries measures less than
  // its database holds (LibrarySession::stale_entries).
  std::vector<std::string> stale_entries;
  std::vector<SuiteRow> rows;

  // Every available side of every row ran and verified (n/a sides are not failures).
  bool all_ok() const;
};

struct BenchSuiteOptions {
  std::vector<Shape> shapes;  // default_suite_shapes() when empty (and `cases` is empty)
  int64_t batch = 1;          // GEMMs per call for each of `shapes`
  // When not empty: the suite's shapes with their own batch counts, instead of `shapes` and
  // `batch` (which must then be left as they are).
  std::vector<SuiteCase> cases;
  std::vector<Precision> precisions = {Precision::kFP32};  // rows of each shape, in this order
  // Layouts of the batched rows (batch > 1), one row each; single GEMMs have one row.
  std::vector<BatchLayout> batch_layouts = {BatchLayout::kStrided};
  // Kernels checked to exist and to compute the batch layouts asked; default_suite_kernels() when
  // empty. The configuration itself comes from the library's chooser, over every kernel.
  std::vector<std::string> kernels;
  bool epilogue = false;  // adds a bias+ReLU row to each FP32 single-GEMM row
  bool clblast = true;    // false: the CLBlast column says n/a even when linked
  // A `gemmtune export -f clblast-json` file: CLBlast runs with its parameters (through
  // clblast::OverrideParameters, as a CLBlast user loading them would) instead of its own
  // database. CLBlast cannot drop an override again, so stock and tuned CLBlast are two runs.
  std::string clblast_params;
  int reps = 20;         // interleaved timed calls of each side
  int warmup = 3;        // interleaved untimed calls of each side
  int queued_calls = 0;  // calls per GPU-clock sample; 0 = the N rule (src/eval/queued_clock.hpp)
  uint64_t seed = 42;    // input data
  std::string templates_dir;
  std::string cache_dir;  // binary cache ("" default folder, "none" disables)
  // Shapes with M*N*K*batch above this are verified on a sample of rows (all columns): one row
  // of every band of `sample_band` rows and the first and last two (src/verify/reference.hpp).
  int64_t full_check_limit = kFullCheckLimit;
  int64_t sample_band = kSampleBand;
  std::string command;  // recorded in the report
};

// Runs the suite on `device`. Failures of one row (a configuration that does not build, a
// wrong result, a CLBlast error) are recorded in that row and the suite goes on; a precision the
// device or CLBlast lacks makes that side n/a with the reason; bad options throw Error.
SuiteReport run_bench_suite(const Device& device, const DeviceProfile* profile,
                            const std::vector<NamedDatabase>& databases,
                            const BenchSuiteOptions& options);

// cuBLAS timings read from scripts/bench-cublas.py's --json output.
struct CublasFigures {
  double device_gflops = 0;           // CUDA events around the call
  double host_ms = 0;                 // host cost per call (0: the file does not say)
  std::optional<double> call_gflops;  // whole call on the host clock (schema 2 on)
};
struct CublasResults {
  std::string source;  // the file and the device, torch and CUDA it reports
  // By shape, epilogue, precision ("32" when a result names none) and batch (1 when none).
  std::map<std::tuple<Shape, bool, std::string, int64_t>, CublasFigures> figures;
};
// Throws Error(kInvalidFile) naming `origin` for a document of another kind or a bad result.
CublasResults read_cublas_results(const nlohmann::json& cublas, const std::string& origin);
// Adds the cuBLAS column to the rows whose shape, epilogue, precision and batch were measured.
void merge_cublas(SuiteReport& report, const CublasResults& cublas);

// gemmtune against one other side over the rows where both ran: the geometric mean of the
// GFLOPS ratios and the worst (lowest) ratio with its row.
struct RatioSummary {
  size_t rows = 0;  // rows with a ratio
  double geomean = 0, worst = 0;
  std::string worst_row;  // SuiteRow::label()
};
// The other side of a ratio, and for cuBLAS which of its times.
enum class Peer { kCLBlast, kCLBlastGpu, kCublas, kCublasDevice };
struct PeerInfo {
  Peer peer;
  const char* key;   // in the JSON report's summary
  const char* name;  // in the summary lines
};
// Every peer, in the order the summaries list them.
const std::vector<PeerInfo>& all_peers();
// `library`: the library column's ratios instead of the direct gemmtune column's (whole call
// only: the library has no device time).
RatioSummary summarize_ratios(const SuiteReport& report, Peer peer, bool library = false);
// One line per other side that has ratios ("gemmtune / CLBlast: geometric mean 1.230, worst
// 0.750 (4096x4096x64 fp32), over 20 rows"); for CLBlast a line saying so when there is none.
std::vector<std::string> suite_summary_lines(const SuiteReport& report);

// A Markdown document for results/: device, driver, date and command at the top, then the table,
// the configurations and any failures.
std::string suite_markdown(const SuiteReport& report);
// An aligned plain-text table for the terminal.
std::string suite_text(const SuiteReport& report);

void to_json(nlohmann::json& j, const Candidate& c);
void from_json(const nlohmann::json& j, Candidate& c);
void to_json(nlohmann::json& j, const LibraryChoice& c);
void from_json(const nlohmann::json& j, LibraryChoice& c);
void to_json(nlohmann::json& j, const SideResult& s);
void from_json(const nlohmann::json& j, SideResult& s);
void to_json(nlohmann::json& j, const CandidateTrial& t);
void from_json(const nlohmann::json& j, CandidateTrial& t);
void to_json(nlohmann::json& j, const SuiteRow& r);
void from_json(const nlohmann::json& j, SuiteRow& r);
void to_json(nlohmann::json& j, const SuiteReport& r);
void from_json(const nlohmann::json& j, SuiteReport& r);

}  // namespace gemmtune
