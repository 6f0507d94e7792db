// SPDX-License-Identifier: Apache-2.0
// Random shapes for bench-suite (--random-shapes) and the summary of a report's ratios.
#include <algorithm>
#include <cmath>
#include <random>

#include <fmt/format.h>

#include "src/bench/bench_suite.hpp"
#include "src/core/error.hpp"

namespace gemmtune {

namespace {

// The largest dimension whose square matrix stays within the kernels' 32-bit indices.
constexpr int64_t kMaxRandomDim = 46340;

}  // namespace

std::vector<Shape> random_suite_shapes(const RandomShapes& r) {
  if (r.count < 1) throw invalid_argument("--random-shapes must be at least 1");
  if (r.min_dim < 1) throw invalid_argument("--min-dim must be at least 1");
  if (r.max_dim > kMaxRandomDim) {
    throw invalid_argument(
        fmt::format("--max-dim {} is above {} (a square matrix would exceed 2^31 elements)",
                    r.max_dim, kMaxRandomDim));
  }
  if (r.max_dim < r.min_dim) {
    throw invalid_argument(fmt::format("--max-dim {} is below --min-dim {}", r.max_dim, r.min_dim));
  }
  std::mt19937_64 engine(r.seed);
  const double lo = std::log(double(r.min_dim));
  const double span = std::log(double(r.max_dim) + 1.0) - lo;
  auto draw = [&]() {
    const double u = double(engine() >> 11) * 0x1.0p-53;
    const auto v = static_cast<int64_t>(std::floor(std::exp(lo + u * span)));
    return std::clamp(v, r.min_dim, r.max_dim);
  };
  std::vector<Shape> out;
  for (int64_t i = 0; i < r.count; ++i) {
    Shape s;
    s.m = draw();
    s.n = draw();
    s.k = draw();
    out.push_back(s);
  }
  return out;
}

namespace {

std::optional<double> peer_ratio(const SuiteRow& row, Peer peer, bool library) {
  switch (peer) {
    case Peer::kCLBlast:
      return library ? row.library_ratio : row.ratio;
    case Peer::kCLBlastGpu:
      return library ? row.library_gpu_ratio : row.gpu_ratio;
    case Peer::kCublas:
      if (!library) return row.cublas_ratio;
      if (row.library.ok() && row.cublas_gflops && *row.cublas_gflops > 0)
        return row.library.gflops / *row.cublas_gflops;
      return std::nullopt;
    case Peer::kCublasDevice:
      return library ? row.library_cublas_device_ratio : row.cublas_device_ratio;
  }
  return std::nullopt;
}

}  // namespace

const std::vector<PeerInfo>& all_peers() {
  static const std::vector<PeerInfo> peers = {
      {Peer::kCLBlast, "clblast", "CLBlast"},
      {Peer::kCLBlastGpu, "clblast_gpu", "CLBlast (GPU clock)"},
      {Peer::kCublas, "cublas", "cuBLAS"},
      {Peer::kCublasDevice, "cublas_device", "cuBLAS (device times)"}};
  return peers;
}

RatioSummary summarize_ratios(const SuiteReport& report, Peer peer, bool library) {
  RatioSummary s;
  double log_sum = 0;
  for (const auto& row : report.rows) {
    const std::optional<double> ratio = peer_ratio(row, peer, library);
    if (!ratio || !(*ratio > 0) || !std::isfinite(*ratio)) continue;
    if (s.rows == 0 || *ratio < s.worst) {
      s.worst = *ratio;
      s.worst_row = row.label();
    }
    log_sum += std::log(*ratio);
    ++s.rows;
  }
  if (s.rows > 0) s.geomean = std::exp(log_sum / double(s.rows));
  return s;
}

std::vector<std::string> suite_summary_lines(const SuiteReport& report) {
  std::vector<std::string> out;
  for (bool library : {false, true}) {
    const char* side = library ? "library" : "gemmtune";
    for (const PeerInfo& peer : all_peers()) {
      const RatioSummary s = summarize_ratios(report, peer.peer, library);
      const char* other = peer.name;
      if (s.rows == 0) {
        if (peer.peer == Peer::kCLBlast && !library)
          out.push_back(fmt::format("{} / {}: no row with both sides", side, other));
        continue;
      }
      out.push_back(fmt::format("{} / {}: geometric mean {:.3f}, worst {:.3f} ({}), over {} row{}",
                                side, other, s.geomean, s.worst, s.worst_row, s.rows,
                                s.rows == 1 ? "" : "s"));
    }
  }
  return out;
}

}  // namespace gemmtune
