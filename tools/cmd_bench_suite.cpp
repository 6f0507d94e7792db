// SPDX-License-Identifier: Apache-2.0
// gemmtune bench-suite: gemmtune's tuned configurations against CLBlast (and optionally a merged
// cuBLAS column) over a suite of shapes, in one or more precisions and batch layouts, as a table,
// JSON or a Markdown document for results/.
#include <algorithm>
#include <climits>
#include <filesystem>
#include <iostream>

#include <fmt/format.h>
#include <spdlog/spdlog.h>

#include "src/bench/bench_suite.hpp"
#include "src/core/error.hpp"
#include "src/core/file_identity.hpp"
#include "src/core/json_util.hpp"
#include "src/db/database.hpp"
#include "src/device/device_profile.hpp"
#include "src/eval/queued_clock.hpp"
#include "tools/commands.hpp"

namespace gemmtune::cli {

namespace {

struct BenchSuiteCliOptions {
  std::string device;
  std::vector<std::string> databases;
  std::string suite;
  std::string shapes;
  RandomShapes random;  // count 0: none
  CLI::Option* min_dim = nullptr;
  CLI::Option* max_dim = nullptr;
  bool list_shapes = false;
  std::string precisions = "32";
  int64_t batch = 1;
  std::string batch_layouts;
  std::string kernels;
  bool epilogue = false;
  int reps = 20;
  EvaluatorOptions eval;  // --warmup, --seed, --cache-dir
  bool no_clblast = false;
  std::string clblast_params;
  std::string cublas;
  bool json = false;
  std::string output;
  std::string save_json;
};

std::string quoted(const std::string& s) {
  if (!s.empty() && s.find_first_of(" \t'\"$`\\") == std::string::npos) return s;
  std::string out = "'";
  for (char c : s) out += c == '\'' ? std::string("'\\''") : std::string(1, c);
  return out + "'";
}

// The command line as parsed, in canonical form, for the report's header.
std::string command_line(const GlobalOptions& g, const BenchSuiteCliOptions& o) {
  std::string s = "gemmtune";
  if (!g.templates_dir.empty()) s += " --templates " + quoted(g.templates_dir);
  if (!g.devices_dir.empty()) s += " --devices " + quoted(g.devices_dir);
  s += " bench-suite";
  if (!o.device.empty()) s += " --device " + quoted(o.device);
  for (const auto& d : o.databases) s += " --db " + quoted(d);
  if (!o.suite.empty()) s += " --suite " + quoted(o.suite);
  if (!o.shapes.empty()) s += " --shapes " + quoted(o.shapes);
  if (o.random.count > 0) {
    s += fmt::format(" --random-shapes {} --min-dim {} --max-dim {}", o.random.count,
                     o.random.min_dim, o.random.max_dim);
  }
  if (o.precisions != "32") s += " --precision " + quoted(o.precisions);
  if (o.batch != 1) s += " --batch " + std::to_string(o.batch);
  if (!o.batch_layouts.empty()) s += " --batch-layout " + quoted(o.batch_layouts);
  if (!o.kernels.empty()) s += " --kernels " + quoted(o.kernels);
  if (o.epilogue) s += " --epilogue";
  const MeasureSettings& m = o.eval.measure;
  s += " --reps " + std::to_string(o.reps) + " --warmup " + std::to_string(m.warmup_runs);
  if (m.data_seed != 42 || o.random.count > 0) s += " --seed " + std::to_string(m.data_seed);
  if (o.no_clblast) s += " --no-clblast";
  if (!o.clblast_params.empty()) s += " --clblast-params " + quoted(o.clblast_params);
  if (!o.cublas.empty()) s += " --cublas " + quoted(o.cublas);
  if (!o.eval.cache_dir.empty()) s += " --cache-dir " + quoted(o.eval.cache_dir);
  if (o.json) s += " --json";
  if (!o.output.empty()) s += " -o " + quoted(o.output);
  if (!o.save_json.empty()) s += " --save-json " + quoted(o.save_json);
  return s;
}

std::vector<std::string> split_list(const std::string& text) {
  std::vector<std::string> out;
  std::string item;
  for (char c : text + ",") {
    if (c == ',') {
      if (!item.empty()) out.push_back(item);
      item.clear();
    } else if (c != ' ') {
      item += c;
    }
  }
  return out;
}

// Each item of a comma list parsed once, in the order given; an empty list is refused.
template <typename T, typename Parse>
std::vector<T> parse_list(const std::string& text, const std::string& flag, Parse parse) {
  std::vector<T> out;
  for (const auto& item : split_list(text)) {
    T v;
    try {
      v = parse(item);
    } catch (const Error& e) {
      throw invalid_argument(flag + ": " + e.what());
    }
    if (std::find(out.begin(), out.end(), v) == out.end()) out.push_back(v);
  }
  if (out.empty()) throw invalid_argument(flag + " names nothing");
  return out;
}

void run(const GlobalOptions& global, const BenchSuiteCliOptions& o) {
  BenchSuiteOptions options;
  if (o.batch < 1) throw invalid_argument("--batch must be at least 1");
  options.precisions = parse_list<Precision>(o.precisions, "--precision", parse_precision);
  if ((o.min_dim->count() || o.max_dim->count()) && o.random.count == 0) {
    throw invalid_argument("--min-dim and --max-dim apply to --random-shapes");
  }
  if (o.random.count > 0) {
    if (!o.suite.empty() || !o.shapes.empty()) {
      throw invalid_argument("--random-shapes excludes --suite and --shapes");
    }
    RandomShapes r = o.random;
    r.seed = o.eval.measure.data_seed;
    options.shapes = random_suite_shapes(r);
    options.batch = o.batch;
  } else if (!o.suite.empty()) {
    // A named suite fixes its shapes and their batch counts.
    if (!o.shapes.empty()) throw invalid_argument("--suite and --shapes exclude each other");
    if (o.batch != 1 && o.suite == "batched") {
      throw invalid_argument("--suite batched fixes its batch counts; leave out --batch");
    }
    for (auto c : named_suite(o.suite)) {
      if (c.batch == 1) c.batch = o.batch;
      options.cases.push_back(c);
    }
  } else {
    if (!o.shapes.empty()) options.shapes = parse_shape_list(o.shapes);
    options.batch = o.batch;
  }
  const bool batched = o.batch > 1 || o.suite == "batched";
  if (!o.batch_layouts.empty()) {
    if (!batched) {
      throw invalid_argument(
          "--batch-layout applies to batches: give --batch above 1 or "
          "--suite batched");
    }
    options.batch_layouts =
        parse_list<BatchLayout>(o.batch_layouts, "--batch-layout", parse_batch_layout);
  } else if (o.suite == "batched") {
    options.batch_layouts = {BatchLayout::kStrided, BatchLayout::kOffsets};
  }
  if (!o.kernels.empty()) {
    options.kernels = split_list(o.kernels);
    if (options.kernels.empty()) throw invalid_argument("--kernels names no kernel");
  }
  options.epilogue = o.epilogue;
  options.clblast = !o.no_clblast;
  options.clblast_params = o.clblast_params;
  options.reps = o.reps;
  options.warmup = o.eval.measure.warmup_runs;
  options.queued_calls = o.eval.measure.queued_calls;
  options.seed = o.eval.measure.data_seed;
  options.cache_dir = o.eval.cache_dir;
  options.templates_dir = templates_dir(global);
  options.command = command_line(global, o);
  if (o.list_shapes) {
    // For scripts/bench-cublas.py --shapes: the same shapes, nothing measured.
    std::vector<Shape> listed = options.shapes.empty() ? default_suite_shapes() : options.shapes;
    if (!options.cases.empty()) listed.clear();
    for (const auto& c : options.cases) listed.push_back(c.shape);
    std::string list;
    for (const auto& sh : listed) list += (list.empty() ? "" : ",") + sh.to_string();
    std::cout << list << "\n";
    return;
  }

  // Read every input file before the device is touched, so that bad input fails fast.
  std::optional<CublasResults> cublas;
  if (!o.cublas.empty()) cublas = read_cublas_results(read_json_file(o.cublas), o.cublas);

  const auto profiles = load_profiles(global);
  const Device device = select_device(o.device, &profiles);
  const DeviceProfile* profile = profiles.match(device.info);

  std::vector<NamedDatabase> databases;
  std::vector<std::string> paths = o.databases;
  if (paths.empty()) {
    const std::string fallback = Database::default_path(device.info);
    std::error_code ec;
    if (!std::filesystem::is_regular_file(fallback, ec)) {
      throw invalid_argument("no tuned database: give --db FILE (the default for this device, " +
                             fallback + ", does not exist)");
    }
    paths.push_back(fallback);
  }
  for (const auto& p : paths) databases.push_back(NamedDatabase{p, Database::load(p)});
  // Before any measurement: neither output replaces a file read.
  std::vector<NamedInput> inputs = {{o.cublas, "--cublas"}};
  for (const auto& p : paths) inputs.push_back({p, "--db"});
  check_output_not_input(o.output, inputs, "-o/--output");
  check_output_not_input(o.save_json, inputs, "--save-json");

  SuiteReport report = run_bench_suite(device, profile, databases, options);
  if (cublas) merge_cublas(report, *cublas);

  if (o.json) {
    std::cout << nlohmann::json(report).dump(2) << "\n";
  } else {
    std::cout << suite_text(report);
  }
  if (!o.output.empty()) {
    write_file_atomic(o.output, suite_markdown(report));
    spdlog::info("wrote {}", o.output);
  }
  if (!o.save_json.empty()) {
    write_json_atomic(o.save_json, nlohmann::json(report));
    spdlog::info("wrote {}", o.save_json);
  }
  if (!report.all_ok()) throw CheckFailed("some rows failed or gave wrong results (see the table)");
}

}  // namespace

void set_bench_suite_command(CLI::App& app, GlobalOptions& options) {
  auto o = std::make_shared<BenchSuiteCliOptions>();
  auto* cmd = app.add_subcommand(
      "bench-suite",
      "Run a shape suite with the tuned database(s) against CLBlast's stock GEMM routines, side "
      "by side, in each asked precision and batch layout");
  add_device_option(*cmd, o->device);
  cmd->add_option("--db", o->databases,
                  "Tuned database (repeatable); default: gemmtune-results/<device id>.json");
  cmd->add_option(
      "--suite", o->suite,
      "Named suite: standard (the default: 256^3 to 8192^3, single GEMMs) or batched "
      "(1024 GEMMs of 32^3 and 64 of 256^3, strided and offsets) or memory (matrix times 1, 8 "
      "or 16 vectors, both ways round, rated in GB/s against a copy)");
  cmd->add_option("--shapes", o->shapes,
                  "Comma-separated MxNxK shapes instead of a suite (default: the standard suite)");
  cmd->add_option(
         "--random-shapes", o->random.count,
         "N shapes drawn log-uniformly per dimension from [--min-dim, --max-dim] "
         "(std::mt19937_64 seeded with --seed, reproducible everywhere) instead of a suite")
      ->check(whole_number(1, 100000));
  o->min_dim =
      cmd->add_option("--min-dim", o->random.min_dim, "Smallest dimension of --random-shapes")
          ->capture_default_str()
          ->check(whole_number(1));
  o->max_dim = cmd->add_option("--max-dim", o->random.max_dim,
                               "Largest dimension of --random-shapes (at most 46340)")
                   ->capture_default_str()
                   ->check(whole_number(1));
  cmd->add_flag("--list-shapes", o->list_shapes,
                "Print the shapes comma-separated (for scripts/bench-cublas.py --shapes) and exit "
                "without measuring");
  cmd->add_option("--precision", o->precisions,
                  "Comma-separated precisions, one row each: 32, 64, 16 (half arithmetic, needs "
                  "cl_khr_fp16) or 16acc32 (half storage, float arithmetic; CLBlast n/a)")
      ->capture_default_str();
  cmd->add_option("--batch", o->batch,
                  "GEMMs of each shape per call (CLBlast: GemmStridedBatched or GemmBatched)")
      ->capture_default_str()
      ->check(whole_number(1));
  cmd->add_option("--batch-layout", o->batch_layouts,
                  "Comma-separated layouts of a batch, one row each: strided, offsets (default: "
                  "strided; both for --suite batched)");
  cmd->add_option("--kernels", o->kernels,
                  "Comma-separated kernels checked to exist and to compute the batch layouts "
                  "asked (default: xgemm, xgemm_direct, xgemm_fast); the configuration run is "
                  "the library's choice, over every kernel");
  cmd->add_flag("--epilogue", o->epilogue,
                "Add a fused bias+ReLU row per FP32 single-GEMM shape (CLBlast: Gemm + a "
                "bias+ReLU kernel)");
  cmd->add_option("--reps", o->reps,
                  "Timed samples of each side, interleaved: each a whole call, N calls queued "
                  "behind a busy-wait kernel (the GPU clock) and N queued on an idle GPU (the "
                  "host cost)")
      ->capture_default_str()
      ->check(whole_number(1, INT_MAX));
  cmd->add_option("--queued-calls", o->eval.measure.queued_calls,
                  "N, the calls of a GPU-clock sample (default 0: at least 20 on a GPU and "
                  "enough for 1 ms, as scripts/bench-cublas.py times cuBLAS)")
      ->capture_default_str()
      ->check(whole_number(0, kMaxQueuedCalls));
  o->eval.measure.warmup_runs = 3;  // untimed calls of each side first
  add_measure_options(*cmd, o->eval, kWarmup | kDataSeed | kCacheDir);
  cmd->add_flag("--no-clblast", o->no_clblast, "Leave the CLBlast column out (n/a)");
  cmd->add_option("--clblast-params", o->clblast_params,
                  "Add a 'CLBlast tuned' column: CLBlast with the parameters of a clblast-json "
                  "export (gemmtune export -f clblast-json), timed interleaved with CLBlast's own")
      ->check(CLI::ExistingFile);
  cmd->add_option("--cublas", o->cublas,
                  "Merge a cuBLAS column from scripts/bench-cublas.py --json output");
  cmd->add_flag("--json", o->json, "Print the report as JSON instead of a table");
  cmd->add_option("-o,--output", o->output, "Also write the report as Markdown to this file");
  cmd->add_option("--save-json", o->save_json, "Also write the report as JSON to this file");
  cmd->callback([&options, o]() { run(options, *o); });
}

}  // namespace gemmtune::cli
