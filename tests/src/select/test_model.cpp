// SPDX-License-Identifier: Apache-2.0
// The selection model's terms on hand-computed cases, and its calibration.
#include <cmath>

#include <spdlog/sinks/ringbuffer_sink.h>
#include <spdlog/spdlog.h>
#include <catch2/catch.hpp>
#include <nlohmann/json.hpp>

#include "src/core/error.hpp"
#include "src/device/device_profile.hpp"
#include "src/kernel/kernel_spec.hpp"
#include "src/select/model.hpp"
#include "src/select/policy.hpp"
#include "tests/test_support.hpp"

// The file's own namespace: the test files compile in unity batches.
namespace gemmtune_tests::src_select_test_model {

using namespace gemmtune;
using gemmtune::test::source_path;

namespace {

// A problem of the kernel's own (column-major) orientation unless `row` is set.
Problem problem(Shape s, bool row = false, int64_t batch = 1) {
  Problem p;
  p.shape = s;
  p.order = row ? Order::kRowMajor : Order::kColMajor;
  p.batch = batch;
  return p;
}

TileGeometry tiles(int64_t mwg, int64_t nwg, int64_t kwg, int64_t split = 1) {
  TileGeometry g;
  g.mwg = mwg;
  g.nwg = nwg;
  g.kwg = kwg;
  g.split_k = split;
  return g;
}

// The defaults: no launch cost, no saturation or overhead, full bandwidth, no cap.
ModelConstants plain() {
  return ModelConstants{};
}

DeviceModel units(double cus) {
  DeviceModel d;
  d.compute_units = cus;
  return d;
}

}  // namespace

TEST_CASE("model: padding, waves and depth of a tile on a shape", "[select][model]") {
  const DeviceModel d = units(4);
  // 4 tiles of 64x64 on 4 units: one round, nothing wasted.
  Estimate e = estimate_at(tiles(64, 64, 16), problem({128, 128, 64}), 1000, d, plain());
  CHECK(e.work_groups == 4);
  CHECK(e.padding == Approx(1));
  CHECK(e.waves == Approx(1));
  CHECK(e.gflops == Approx(1000));
  // 6 tiles on 4 units: the busiest unit runs 2, so the device is used 6 / 8.
  e = estimate_at(tiles(64, 64, 16), problem({192, 128, 64}), 1000, d, plain());
  CHECK(e.work_groups == 6);
  CHECK(e.waves == Approx(0.75));
  CHECK(e.gflops == Approx(750));
  // 100 of 128 rows used: padding 100/128.
  e = estimate_at(tiles(64, 64, 16), problem({100, 128, 64}), 1000, d, plain());
  CHECK(e.padding == Approx(100.0 / 128));
  // A guarded kernel that skips the edges' work (edge cost 0) pays nothing for it.
  ModelConstants guarded = plain();
  guarded.edge_cost = 0;
  CHECK(estimate_at(tiles(64, 64, 16), problem({100, 128, 64}), 1000, d, guarded).padding == 1);
  // Fixed work per group: 4 k-iterations and an overhead of one cost 4/5.
  ModelConstants overhead = plain();
  overhead.group_overhead = 1;
  CHECK(estimate_at(tiles(64, 64, 16), problem({128, 128, 64}), 1000, d, overhead).depth ==
        Approx(0.8));
  // A unit needs 2 resident groups for its full rate: a single one runs at half.
  ModelConstants starved = plain();
  starved.saturation_groups = 2;
  TileGeometry two_slots = tiles(64, 64, 16);
  two_slots.slots = 2;
  CHECK(estimate_at(two_slots, problem({128, 128, 64}), 1000, d, starved).waves == Approx(0.5));
  CHECK(estimate_at(two_slots, problem({256, 128, 64}), 1000, d, starved).waves == Approx(1));
}

TEST_CASE("model: the kernel sees a row-major problem with M and N swapped", "[select][model]") {
  const DeviceModel d = units(1);
  // 16 x 4096 row-major: the kernel's M is 4096 and its N 16, which a 128x16 tile covers exactly.
  CHECK(estimate_at(tiles(128, 16, 8), problem({16, 4096, 64}, true), 1000, d, plain()).padding ==
        Approx(1));
  CHECK(estimate_at(tiles(128, 16, 8), problem({16, 4096, 64}), 1000, d, plain()).padding ==
        Approx(16.0 / 128));
  CHECK(log_distance(problem({16, 4096, 64}, true), problem({4096, 16, 64})) == Approx(0));
}

TEST_CASE("model: split-K helps when the tiles are too few, and costs memory", "[select][model]") {
  DeviceModel d = units(64);
  // 256x256 in 64x64 tiles is 16 groups on 64 units; split 4 ways along K, 64 groups.
  const Problem deep = problem({256, 256, 8192});
  const Estimate one = estimate_at(tiles(64, 64, 16), deep, 1000, d, plain());
  const Estimate four = estimate_at(tiles(64, 64, 16, 4), deep, 1000, d, plain());
  CHECK(one.waves == Approx(0.25));
  CHECK(four.waves == Approx(1));
  CHECK(four.gflops > 3 * one.gflops);
  // The partial products go through memory: with a bandwidth, split-K moves more bytes.
  d.bandwidth_gbs = 100;
  const Estimate one_mem = estimate_at(tiles(64, 64, 16), deep, 1000, d, plain());
  const Estimate four_mem = estimate_at(tiles(64, 64, 16, 4), deep, 1000, d, plain());
  CHECK(four_mem.memory_ms > one_mem.memory_ms);
  // A shallow problem has no use for it: 4096x4096x64 split 4 ways is memory-bound.
  const Problem shallow = problem({4096, 4096, 64});
  const Estimate s1 = estimate_at(tiles(64, 64, 16), shallow, 1000, d, plain());
  const Estimate s4 = estimate_at(tiles(64, 64, 16, 4), shallow, 1000, d, plain());
  CHECK(s4.memory_bound());
  CHECK(s4.gflops < s1.gflops);
}

TEST_CASE("model: a matrix-vector shape is bandwidth-bound", "[select][model]") {
  DeviceModel d = units(132);
  d.bandwidth_gbs = 3000;
  ModelConstants c = plain();
  c.bandwidth_efficiency = 0.5;
  c.edge_cost = 0;  // a kernel that skips the rows past M = 1 (else 63 of 64 rows are waste)
  // 1 x 4096 x 4096 in FP32: B alone is 64 MiB, 2 * 4096 * 4096 flops.
  const Estimate e = estimate_at(tiles(64, 64, 16), problem({1, 4096, 4096}), 40000, d, c);
  CHECK(e.memory_bound());
  const double bytes = 4.0 * (1 * 4096 + 4096.0 * 4096 + 4096);
  CHECK(e.memory_ms == Approx(bytes / (1500 * 1e6)));
  CHECK(e.gflops == Approx(2.0 * 4096 * 4096 / (e.memory_ms * 1e6)));
}

TEST_CASE("model: a measurement predicts itself, and its rate stays within bounds",
          "[select][model]") {
  const ProfileSet profiles = ProfileSet::load_dir(source_path("devices"));
  const DeviceModel d = DeviceModel::of(profiles.find("sm_90", "NVIDIA H100 80GB HBM3"), 0, 0);
  CHECK(d.compute_units == 132);
  CHECK(d.bandwidth_gbs == 3350);
  CHECK(d.peak_gflops(Precision::kFP32) == 66908);
  const ModelConstants c = SelectionPolicy::of(d.profile).model;
  const TileGeometry g = tiles(128, 64, 8, 4);
  const Problem p = problem({1024, 1024, 1024}, true);
  CHECK(transfer(g, p, 30000, p, d, c).gflops == Approx(30000));
  // The implied rate is never below what was measured, nor above the cap (unless measured).
  CHECK(implied_rate(g, p, 30000, d, c) >= 30000);
  CHECK(implied_rate(g, p, 30000, d, c) <= c.rate_cap * 66908 + 1e-6);
  CHECK(implied_rate(g, p, 60000, d, c) == 60000);
}

TEST_CASE("model: a tiled measurement credits at most rate_inflation times its rate",
          "[select][model]") {
  const ProfileSet profiles = ProfileSet::load_dir(source_path("devices"));
  const DeviceModel d = DeviceModel::of(profiles.find("sm_90", "NVIDIA H200"), 0, 0);
  ModelConstants c = SelectionPolicy::of(d.profile).model;
  REQUIRE(c.rate_inflation == 2);  // the sm_90 profile's selection policy
  const TileGeometry g = tiles(32, 32, 16);
  // 32x32x32 in 3 us: nearly all of it the launch, so the formula alone implies the cap.
  const Problem tiny = problem({32, 32, 32}, true);
  const double tiny_gflops = 2.0 * 32 * 32 * 32 / 3e3;
  CHECK(implied_rate(g, tiny, tiny_gflops, d, c) == Approx(2 * tiny_gflops));
  const Problem large = problem({4096, 4096, 4096}, true);
  CHECK(transfer(g, tiny, tiny_gflops, large, d, c).gflops <= 2 * tiny_gflops + 1e-9);
  c.rate_inflation = 0;  // unbounded: the cap
  CHECK(implied_rate(g, tiny, tiny_gflops, d, c) ==
        Approx(c.rate_cap * d.peak_gflops(Precision::kFP32)));
  // An untiled kernel's measurement (the skinny kernel's matrix-vector product, memory-bound) is
  // not bounded: the model predicts it only on skinny shapes, where memory rules.
  c.rate_inflation = 2;
  TileGeometry untiled = g;
  untiled.tiled = false;
  const Problem gemv = problem({1, 8192, 8192}, true);
  const double gemv_ms = 4.0 * 8192 * 8192 / (0.5 * 4800 * 1e6);  // B once, at half the bandwidth
  const double gemv_gflops = 2.0 * 8192 * 8192 / (gemv_ms * 1e6);
  CHECK(implied_rate(untiled, gemv, gemv_gflops, d, c) > 2 * gemv_gflops);
  CHECK(implied_rate(g, gemv, gemv_gflops, d, c) == Approx(2 * gemv_gflops));
}

TEST_CASE("model: the geometry comes from the declaration and the measured resources",
          "[select][model]") {
  const ProfileSet profiles = ProfileSet::load_dir(source_path("devices"));
  const DeviceModel d = DeviceModel::of(profiles.find("sm_90", "NVIDIA H100 80GB HBM3"), 132, 0);
  const KernelSpec direct = KernelSpec::load(source_path("kernel_templates/xgemm_direct.json"));
  // xgemm_direct's tile is WGD in each dimension (derived values), no split-K.
  TileGeometry g = TileGeometry::of(&direct, direct.defaults(), Precision::kFP32, {}, d);
  CHECK(g.mwg == direct.defaults().at("WGD"));
  CHECK(g.kwg == direct.defaults().at("WGD"));
  CHECK(g.split_k == 1);
  CHECK(g.slots >= 1);
  const KernelSpec fast = KernelSpec::load(source_path("kernel_templates/xgemm_fast.json"));
  Configuration config = fast.defaults();
  config["SPLITK"] = 4;
  ResourceUsage heavy;
  heavy.registers = 255;
  heavy.local_mem_bytes = 40000;
  ResourceUsage light;
  light.registers = 32;
  light.local_mem_bytes = 4096;
  const TileGeometry a = TileGeometry::of(&fast, config, Precision::kFP32, heavy, d);
  const TileGeometry b = TileGeometry::of(&fast, config, Precision::kFP32, light, d);
  CHECK(a.split_k == 4);
  CHECK(a.work_group_size == config.at("MDIMC") * config.at("NDIMC"));
  CHECK(a.slots < b.slots);  // more registers and local memory: fewer groups resident
  // Without a declaration, the parameters of those names.
  const TileGeometry raw =
      TileGeometry::of(nullptr, {{"MWG", 32}, {"NWG", 16}}, Precision::kFP32, {}, units(4));
  CHECK(raw.mwg == 32);
  CHECK(raw.nwg == 16);
  CHECK(raw.kwg == 1);
}

TEST_CASE("model: calibration recovers the constants that made the data", "[select][model]") {
  // No bandwidth figure: the memory term (tested above) stays out of the fit.
  const DeviceModel d = units(16);
  ModelConstants truth = plain();
  truth.saturation_groups = 1.5;
  truth.group_overhead = 1;
  truth.launch_us = 5;
  CalibrationGrid grid;
  grid.saturation_groups = {1, 1.5, 2};
  grid.group_overhead = {0, 1, 2};
  grid.edge_cost = {0.5, 1};
  grid.bandwidth_efficiency = {1};
  grid.launch_us = {0, 5, 10};
  grid.rate_cap = {1};
  grid.rate_inflation = {0};
  CHECK(grid.size() == 54);
  // Three configurations, each "measured" by the model itself at several shapes.
  std::vector<CalibrationSample> obs;
  const TileGeometry geometries[] = {tiles(64, 64, 16), tiles(32, 128, 8, 4), tiles(128, 128, 8)};
  const Shape shapes[] = {{100, 300, 2000}, {512, 512, 512}, {2048, 64, 4096}, {64, 64, 8192}};
  for (int i = 0; i < 3; ++i) {
    for (const Shape& s : shapes) {
      CalibrationSample o;
      o.kernel = "xgemm_fast";
      o.config = {{"ID", i}};
      o.problem = problem(s);
      o.geometry = geometries[i];
      o.geometry.slots = 2;
      o.gflops = estimate_at(o.geometry, o.problem, 500.0 * (i + 1), d, truth).gflops;
      obs.push_back(o);
    }
  }
  const Calibration cal = calibrate(obs, d, grid);
  CHECK(cal.pairs == 3 * 4 * 3);
  CHECK(cal.mean_abs_log_error < 1e-9);
  CHECK(cal.unmodelled_mean_abs_log_error > 0.1);
  CHECK(cal.constants.saturation_groups == 1.5);
  CHECK(cal.constants.group_overhead == 1);
  CHECK(cal.constants.edge_cost == 1);
  CHECK(cal.constants.launch_us == 5);
  CHECK(cal.constants.distance_penalty == Approx(0).margin(1e-9));

  // One shape per configuration gives nothing to fit.
  obs.resize(1);
  CHECK_THROWS_AS(calibrate(obs, d, grid), Error);
}

namespace {

// A template whose parameters have none of the conventional names: only its roles say which one
// is the tile.
nlohmann::json other_names() {
  return nlohmann::json::parse(R"({
    "kernel": "other_names", "source": "other_names.cl", "entry": "other_names",
    "parameters": [
      {"name": "TM", "values": [32, 64], "default": 64},
      {"name": "TN", "values": [16, 32], "default": 32},
      {"name": "TK", "values": [8], "default": 8},
      {"name": "WX", "values": [8], "default": 8},
      {"name": "WY", "values": [4], "default": 4},
      {"name": "PARTS", "values": [1, 2], "default": 1}
    ],
    "work_group_size": "WX * WY",
    "launch": {"local": ["WX", "WY"], "global": ["ceil_div(M, TM) * WX", "ceil_div(N, TN) * WY"]},
    "roles": {"tile_m": "TM", "tile_n": "TN", "tile_k": "TK", "threads_m": "WX",
              "threads_n": "WY", "split_k": "PARTS"}
  })");
}

}  // namespace

TEST_CASE("model: a template's roles name its tile, whatever its parameters are called",
          "[select][model]") {
  const DeviceModel d = units(8);
  const KernelSpec spec = KernelSpec::from_json(other_names(), "other_names.json");
  const Configuration c = spec.complete({{"PARTS", 2}});
  const TileGeometry g = TileGeometry::of(&spec, c, Precision::kFP32, {}, d);
  CHECK(g.tiled);
  CHECK(g.mwg == 64);
  CHECK(g.nwg == 32);
  CHECK(g.kwg == 8);
  CHECK(g.split_k == 2);
  CHECK(g.work_group_size == 32);
  // Without the roles the same template has no tile the model could know of.
  nlohmann::json j = other_names();
  j.erase("roles");
  const KernelSpec bare = KernelSpec::from_json(j, "other_names.json");
  const TileGeometry none = TileGeometry::of(&bare, c, Precision::kFP32, {}, d);
  CHECK_FALSE(none.tiled);
  CHECK(none.mwg == 1);
  CHECK(none.split_k == 1);
}

TEST_CASE("model: a declaration without the tile's roles is said so, once per kernel",
          "[select][model]") {
  auto ring = std::make_shared<spdlog::sinks::ringbuffer_sink_mt>(16);
  spdlog::default_logger()->sinks().push_back(ring);
  auto said = [&](const std::string& text) {
    size_t n = 0;
    for (const auto& line : ring->last_formatted()) n += line.find(text) != std::string::npos;
    return n;
  };
  const DeviceModel d = units(8);
  // No tile role at all: untiled, and said once however often it is asked.
  nlohmann::json j = other_names();
  j["kernel"] = "role_test_bare";
  j.erase("roles");
  const KernelSpec bare = KernelSpec::from_json(j, "role_test_bare.json");
  for (int i = 0; i < 3; ++i) {
    CHECK_FALSE(TileGeometry::of(&bare, bare.defaults(), Precision::kFP32, {}, d).tiled);
  }
  // tile_m without tile_k: the missing role named and taken as 1.
  j = other_names();
  j["kernel"] = "role_test_partial";
  j["roles"].erase("tile_k");
  const KernelSpec partial = KernelSpec::from_json(j, "role_test_partial.json");
  const TileGeometry g = TileGeometry::of(&partial, partial.defaults(), Precision::kFP32, {}, d);
  CHECK(g.mwg == 64);
  CHECK(g.kwg == 1);
  // A tile in N alone (xgemm_skinny's) is untiled in M by design: nothing to say.
  const KernelSpec skinny = KernelSpec::load(source_path("kernel_templates/xgemm_skinny.json"));
  CHECK_FALSE(TileGeometry::of(&skinny, skinny.defaults(), Precision::kFP32, {}, d).tiled);
  spdlog::default_logger()->sinks().pop_back();
  CHECK(said("kernel 'role_test_bare' declares no work-group tile") == 1);
  CHECK(said("kernel 'role_test_partial' declares tile_m but not tile_k") == 1);
  CHECK(said("kernel 'xgemm_skinny'") == 0);
}

TEST_CASE("model: a configuration without its declaration or a tile is said so, once",
          "[select][model]") {
  auto ring = std::make_shared<spdlog::sinks::ringbuffer_sink_mt>(16);
  spdlog::default_logger()->sinks().push_back(ring);
  auto warnings = [&] {
    size_t n = 0;
    for (const auto& line : ring->last_formatted()) {
      if (line.find("no kernel declaration") != std::string::npos) ++n;
    }
    return n;
  };
  // The conventional names give the tile: read as before.
  const TileGeometry named = TileGeometry::of(
      nullptr, {{"MWG", 32}, {"NWG", 16}, {"ROLE_TEST_A", 1}}, Precision::kFP32, {}, units(4));
  CHECK(named.mwg == 32);
  CHECK(warnings() == 0);
  // None of them: a 1x1 tile, said once however often it is asked.
  for (int i = 0; i < 3; ++i) {
    const TileGeometry unknown =
        TileGeometry::of(nullptr, {{"ROLE_TEST_B", 64}}, Precision::kFP32, {}, units(4));
    CHECK_FALSE(unknown.tiled);
    CHECK(unknown.mwg == 1);
  }
  const auto lines = ring->last_formatted();
  spdlog::default_logger()->sinks().pop_back();
  REQUIRE(warnings() == 1);
  CHECK_THAT(lines.back(), Catch::Contains("{ROLE_TEST_B}") && Catch::Contains("1x1 tile"));
}

}  // namespace gemmtune_tests::src_select_test_model
