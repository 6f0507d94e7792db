// SPDX-License-Identifier: Apache-2.0
#include "tests/search/strategies/synthetic_space.hpp"

#include <cmath>

#include "search/strategies/rng.hpp"
#include "src/core/json_util.hpp"
#include "tests/test_support.hpp"

namespace gemmtune::test {

namespace {

double lg(int64_t v) {
  return std::log2(double(std::max<int64_t>(v, 1)));
}

int64_t get(const Configuration& c, const char* name, int64_t fallback) {
  auto it = c.find(name);
  return it == c.end() ? fallback : it->second;
}

// A deterministic value in [-1, 1] per configuration (the "ruggedness" real spaces have).
double hash_noise(const Configuration& c, uint64_t seed) {
  uint64_t h = seed * 0x9e3779b97f4a7c15ULL + 1;
  for (const auto& [name, v] : c) {
    for (char ch : name) h = (h ^ uint64_t(uint8_t(ch))) * 1099511628211ULL;
    h = (h ^ uint64_t(v)) * 1099511628211ULL;
  }
  Rng r(h);
  return 2 * r.uniform() - 1;
}

}  // namespace

Journal synthetic_gemm_journal(const ParamSpace& space, const Problem& problem, uint64_t seed) {
  Journal j;
  j.path = "synthetic";
  j.headers.push_back(
      {{"type", "header"},
       {"kernel", space.spec().name()},
       {"space", space.name()},
       {"device", {{"id", "synthetic"}, {"name", "synthetic GEMM-like space"}, {"type", "gpu"}}},
       {"synthetic", true}});
  const double flops = problem.flops();
  space.for_each([&](const Configuration& c) {
    const double mwg = lg(get(c, "MWG", 64)), nwg = lg(get(c, "NWG", 64));
    const double kwg = lg(get(c, "KWG", 32)), kwi = lg(get(c, "KWI", 2));
    const double mdimc = lg(get(c, "MDIMC", 16)), ndimc = lg(get(c, "NDIMC", 16));
    const double mdima = lg(get(c, "MDIMA", 16)), ndimb = lg(get(c, "NDIMB", 16));
    const double vwm = lg(get(c, "VWM", 2)), vwn = lg(get(c, "VWN", 2));
    const double sa = double(get(c, "SA", 1)), sb = double(get(c, "SB", 1));
    const double strm = double(get(c, "STRM", 0)), strn = double(get(c, "STRN", 0));
    const double pada = double(get(c, "PADA", 0)), padb = double(get(c, "PADB", 0));
    const double wg = mdimc + ndimc;                    // log2 work-group size
    const double tile = (mwg - mdimc) + (nwg - ndimc);  // log2 outputs per work-item
    double e = 0;
    e += 0.10 * (wg - 8) * (wg - 8);                // best near 256 work-items
    e += 0.12 * (tile - 4.5) * (tile - 4.5);        // register tiles of 16-32 outputs
    e += tile > 6 ? 0.6 * (tile - 6) : 0;           // spills beyond 64 outputs
    e += 0.05 * (mdimc - ndimc) * (mdimc - ndimc);  // square-ish work-groups
    e -= 0.10 * kwg;                                // longer K slices amortize barriers
    e += 0.06 * (kwi - 1.5) * (kwi - 1.5);          // moderate unrolling
    e -= 0.12 * std::min(vwm, 2.0) + 0.08 * std::min(vwn, 2.0);
    e += vwm > 2 ? 0.15 : 0;
    e += vwn > 2 ? 0.10 : 0;
    e -= sa * (0.10 + 0.05 * (mwg - 5)) +
         sb * (0.10 + 0.05 * (nwg - 5));  // staging pays on big tiles
    e += 0.04 * std::abs(mdima - mdimc) + 0.04 * std::abs(ndimb - ndimc);
    e += 0.05 * strm * (vwm > 0 ? 1.0 : -1.0) + 0.03 * strn;
    e -= 0.04 * sa * pada + 0.04 * sb * padb;
    e += 0.03 * hash_noise(c, seed);  // ruggedness, about ±3%

    Result r;
    r.config = c;
    // Regions that fail: huge tiles with both operands staged run out of resources; a few
    // scattered configurations miscompile.
    if (tile > 6.5 && sa + sb > 1.5) {
      r = Result::failure(c, Status::kRunFailed, "synthetic: out of resources");
    } else if (hash_noise(c, seed + 7) > 0.985) {
      r = Result::failure(c, Status::kCompileFailed, "synthetic: compiler error");
    } else {
      const double ms = 0.5 * std::exp(e);
      r.time.median_ms = r.time.min_ms = r.time.mean_ms = r.time.max_ms = ms;
      r.time.runs = 10;
      r.gflops = flops / (ms * 1e6);
    }
    j.entries.push_back({space.spec().name(), problem, r, 0.0});
    return true;
  });
  return j;
}

Journal synthetic_xgemm_gpu_journal(uint64_t seed) {
  // The xgemm `gpu` ranges with the stride and padding switches fixed: about 34 thousand valid
  // configurations under the limits of a typical discrete GPU.
  static const KernelSpec spec = [] {
    nlohmann::json j = read_json_file(source_path("kernel_templates/xgemm.json"));
    j["spaces"]["synthetic_gpu"] = {
        {"description", "xgemm gpu ranges, STRM/STRN/PADA/PADB fixed (synthetic tests)"},
        {"base", "default"},
        {"values",
         {{"MWG", {16, 32, 64, 128}},
          {"NWG", {16, 32, 64, 128}},
          {"KWG", {16, 32}},
          {"MDIMC", {8, 16, 32}},
          {"NDIMC", {8, 16, 32}},
          {"MDIMA", {8, 16, 32}},
          {"NDIMB", {8, 16, 32}},
          {"KWI", {2, 8}},
          {"VWM", {1, 2, 4, 8}},
          {"VWN", {1, 2, 4, 8}},
          {"SA", {0, 1}},
          {"SB", {0, 1}},
          {"STRM", {0}},
          {"STRN", {0}},
          {"PADA", {0}},
          {"PADB", {0}}}}};
    return KernelSpec::from_json(j, "xgemm.json + synthetic_gpu space");
  }();
  DeviceLimits limits;
  limits.max_work_group_size = 1024;
  limits.local_mem_bytes = 65536;
  limits.max_registers_per_thread = 255;
  ParamSpace space(spec, "synthetic_gpu", limits, Context{{"ELEM_BYTES", 4}});
  Problem p;
  p.shape = {1024, 1024, 1024};
  return synthetic_gemm_journal(space, p, seed);
}

std::string write_xgemm_cpu_replay(const std::string& path, const std::vector<Shape>& shapes,
                                   uint64_t seed) {
  static const KernelSpec spec = KernelSpec::load(source_path("kernel_templates/xgemm.json"));
  const ParamSpace space(spec, "cpu", DeviceLimits{}, Context{{"ELEM_BYTES", 4}});
  JournalWriter w(path);
  for (size_t i = 0; i < shapes.size(); ++i) {
    Problem p;
    p.shape = shapes[i];
    const Journal j = synthetic_gemm_journal(space, p, seed);
    if (i == 0) w.write_header(j.headers.front());
    for (const auto& e : j.entries) w.append(e.kernel, e.problem, e.result, 0);
  }
  return path;
}

}  // namespace gemmtune::test
