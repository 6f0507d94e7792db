// SPDX-License-Identifier: Apache-2.0
#include <filesystem>

#include <fmt/format.h>
#include <spdlog/spdlog.h>

#include "src/bench/bench_suite.hpp"
#include "src/core/error.hpp"

namespace gemmtune {

namespace fs = std::filesystem;

CublasResults read_cublas_results(const nlohmann::json& j, const std::string& origin) {
  if (!j.is_object() || !j.contains("format") || j["format"] != kCublasBenchFormat) {
    throw invalid_file(origin,
                       std::string("not a bench-cublas.py --json output (no \"format\": \"") +
                           kCublasBenchFormat + "\")");
  }
  if (!j.contains("results") || !j["results"].is_array()) {
    throw invalid_file(origin, "missing the 'results' array");
  }
  CublasResults out;
  const auto& results = j["results"];
  for (size_t i = 0; i < results.size(); ++i) {
    const auto& r = results[i];
    const std::string where = "results[" + std::to_string(i) + "]";
    for (const char* f : {"m", "n", "k"}) {
      if (!r.is_object() || !r.contains(f) || !r[f].is_number_integer() ||
          r[f].get<int64_t>() <= 0) {
        throw invalid_file(origin, where + ": '" + f + "' must be a positive integer");
      }
    }
    if (!r.contains("gflops") || !r["gflops"].is_number()) {
      throw invalid_file(origin, where + ": 'gflops' must be a number");
    }
    CublasFigures figures;
    figures.device_gflops = r["gflops"].get<double>();
    // Schema 1 files have the device time only.
    if (r.contains("wall_gflops")) {
      if (!r["wall_gflops"].is_number()) {
        throw invalid_file(origin, where + ": 'wall_gflops' must be a number");
      }
      figures.call_gflops = r["wall_gflops"].get<double>();
    }
    if (r.contains("host_per_call_ms")) {
      if (!r["host_per_call_ms"].is_number() || r["host_per_call_ms"].get<double>() <= 0) {
        throw invalid_file(origin, where + ": 'host_per_call_ms' must be a positive number");
      }
      figures.host_ms = r["host_per_call_ms"].get<double>();
    }
    const bool epilogue =
        r.contains("epilogue") && r["epilogue"].is_boolean() && r["epilogue"].get<bool>();
    // Precision and batch are optional: bench-cublas.py times single FP32 GEMMs and names neither.
    std::string precision = "32";
    if (r.contains("precision")) {
      const auto& p = r["precision"];
      try {
        precision = to_string(parse_precision(p.is_string() ? p.get<std::string>() : p.dump()));
      } catch (const Error&) {
        throw invalid_file(origin, where + ": 'precision' must be 32, 64, 16 or 16acc32");
      }
    }
    int64_t batch = 1;
    if (r.contains("batch")) {
      if (!r["batch"].is_number_integer() || r["batch"].get<int64_t>() < 1) {
        throw invalid_file(origin, where + ": 'batch' must be a positive integer");
      }
      batch = r["batch"].get<int64_t>();
    }
    const Shape s{r["m"].get<int64_t>(), r["n"].get<int64_t>(), r["k"].get<int64_t>()};
    out.figures[{s, epilogue, precision, batch}] = figures;
  }
  auto text = [&](const char* key, const char* fallback) {
    return j.contains(key) && j[key].is_string() ? j[key].get<std::string>()
                                                 : std::string(fallback);
  };
  out.source = fmt::format("{} ({}, torch {}, CUDA {})", fs::path(origin).filename().string(),
                           text("device", "unknown device"), text("torch", "?"), text("cuda", "?"));
  return out;
}

void merge_cublas(SuiteReport& report, const CublasResults& cublas) {
  int matched = 0;
  for (auto& row : report.rows) {
    auto it = cublas.figures.find({row.shape, row.epilogue, to_string(row.precision), row.batch});
    if (it == cublas.figures.end()) continue;
    ++matched;
    const CublasFigures& f = it->second;
    row.cublas_device_gflops = f.device_gflops;
    row.cublas_gflops = f.call_gflops;
    if (f.host_ms > 0) row.cublas_host_ms = f.host_ms;
    if (row.library.ok() && f.device_gflops > 0 && row.library.gpu_gflops > 0) {
      row.library_cublas_device_ratio = row.library.gpu_gflops / f.device_gflops;
    }
    if (!row.gemmtune.ok()) continue;
    // Each time against its own kind: whole call with whole call, device with device.
    if (f.call_gflops && *f.call_gflops > 0) {
      row.cublas_ratio = row.gemmtune.gflops / *f.call_gflops;
    }
    if (f.device_gflops > 0 && row.gemmtune.gpu_gflops > 0) {
      row.cublas_device_ratio = row.gemmtune.gpu_gflops / f.device_gflops;
    }
  }
  if (matched == 0)
    spdlog::warn("{}: no shape of the suite is in the cuBLAS results", cublas.source);
  report.cublas_source = cublas.source;
}

}  // namespace gemmtune
