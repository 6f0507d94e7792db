// SPDX-License-Identifier: Apache-2.0
// The prior (src/select/prior.hpp): each term moves the prediction the way its physics says, a
// group that cannot be resident is predicted 0, estimates are capped as a compiler caps, the
// ranking is stable, the fit finds constants it was given, and the validation's arithmetic
// (random baseline, ties) is exact.
#include <cmath>
#include <fstream>

#include <catch2/catch.hpp>

#include "src/core/error.hpp"
#include "src/device/device_profile.hpp"
#include "src/kernel/kernel_spec.hpp"
#include "src/select/prior.hpp"
#include "src/select/rank_validation.hpp"
#include "tests/test_support.hpp"

// The file's own namespace: the test files compile in unity batches.
namespace gemmtune_tests::src_select_test_prior {

using namespace gemmtune;
using gemmtune::test::source_path;
using gemmtune::test::temp_dir;

namespace {

struct Fixture {
  ProfileSet profiles = ProfileSet::load_dir(source_path("devices"));
  KernelSpec spec = KernelSpec::load_named(source_path("kernel_templates"), "xgemm_fast");
  DeviceModel h100;
  Fixture() {
    const DeviceProfile* p = profiles.find("sm_90", "NVIDIA H100 80GB HBM3");
    REQUIRE(p);
    h100 = DeviceModel::of(p, 132, 1980);
  }
  Configuration config(const std::string& partial) const {
    return spec.complete(parse_configuration(partial));
  }
};

Problem square(int64_t n, Precision precision = Precision::kFP32) {
  Problem p;
  p.shape = {n, n, n};
  p.precision = precision;
  return p;
}

ResourceUsage counted(int64_t registers, int64_t spills = 0) {
  ResourceUsage u;
  u.registers = registers;
  u.spills = spills;
  return u;
}

// One term at a time: efficiency 1 and the named constant, the others 0.
PriorConstants only(double PriorConstants::*term, double value) {
  PriorConstants c;
  c.efficiency = 1;
  c.*term = value;
  return c;
}

const char* kTile = "MWG=128,NWG=128,KWG=8,MDIMC=16,NDIMC=16,VWM=4,VWN=4";

}  // namespace

TEST_CASE("a spilling configuration ranks below its non-spilling twin", "[select][prior]") {
  Fixture f;
  const Configuration c = f.config(kTile);
  const Problem p = square(4096);
  const auto clean = prior_estimate(&f.spec, c, p, counted(128), f.h100);
  const auto spilled = prior_estimate(&f.spec, c, p, counted(128, 64), f.h100);
  CHECK(clean.fits);
  CHECK(spilled.spills == 64);
  CHECK(spilled.gflops < clean.gflops);
  CHECK(spilled.spill_factor < 1);
  const auto ranking =
      rank_by_prior(&f.spec, {{c, counted(128, 64)}, {c, counted(128)}}, p, f.h100);
  REQUIRE(ranking.size() == 2);
  CHECK(ranking.front().index == 1);
}

TEST_CASE("more occupancy never hurts at an equal tile", "[select][prior]") {
  Fixture f;
  const Configuration c = f.config(kTile);
  const Problem p = square(8192);  // enough groups to fill every resident slot
  double previous = 0;
  int64_t previous_waves = 0;
  // Fewer registers, more resident waves: the prediction only grows.
  for (int64_t registers : {255, 200, 168, 128, 96, 64, 32}) {
    const auto e = prior_estimate(&f.spec, c, p, counted(registers), f.h100);
    INFO(registers << " registers: " << e.describe(f.h100));
    REQUIRE(e.fits);
    CHECK(e.waves_per_simd >= previous_waves);
    CHECK(e.gflops >= previous);
    previous = e.gflops;
    previous_waves = int64_t(e.waves_per_simd);
  }
  // ...and it did grow: the term is not inert.
  CHECK(prior_estimate(&f.spec, c, p, counted(64), f.h100).gflops >
        prior_estimate(&f.spec, c, p, counted(255), f.h100).gflops);
}

TEST_CASE("the register tile's and the work-group tile's reuse raise the rate", "[select][prior]") {
  Fixture f;
  const Problem p = square(4096);
  // Local loads: the same 64x64 tile as 8x8 outputs per work-item against 4x4.
  const PriorConstants lds = only(&PriorConstants::lds_cost, 0.5);
  const auto big = prior_estimate(&f.spec, f.config("MWG=64,NWG=64,MDIMC=8,NDIMC=8,VWM=2,VWN=2"), p,
                                  counted(96), f.h100, lds);
  const auto small =
      prior_estimate(&f.spec, f.config("MWG=64,NWG=64,MDIMC=16,NDIMC=16,VWM=2,VWN=2"), p,
                     counted(96), f.h100, lds);
  CHECK(big.lds_overhead < small.lds_overhead);
  CHECK(big.rate > small.rate);
  // Global traffic: 8x8 per work-item in a 128x128 group against a 64x64 one.
  const PriorConstants traffic = only(&PriorConstants::tile_traffic_cost, 0.5);
  const auto wide = prior_estimate(&f.spec, f.config("MWG=128,NWG=128,MDIMC=16,NDIMC=16"), p,
                                   counted(96), f.h100, traffic);
  const auto narrow = prior_estimate(&f.spec, f.config("MWG=64,NWG=64,MDIMC=8,NDIMC=8"), p,
                                     counted(96), f.h100, traffic);
  CHECK(wide.traffic_overhead < narrow.traffic_overhead);
  CHECK(wide.rate > narrow.rate);
}

TEST_CASE("vector loads count up to 16 bytes", "[select][prior]") {
  Fixture f;
  const Problem p = square(4096);
  const PriorConstants issue = only(&PriorConstants::issue_cost, 1);
  auto overhead = [&](const char* vectors) {
    const std::string c = std::string("MWG=128,NWG=128,MDIMC=16,NDIMC=16,") + vectors;
    return prior_estimate(&f.spec, f.config(c), p, counted(128), f.h100, issue).issue_overhead;
  };
  CHECK(overhead("VWM=2,VWN=2") > overhead("VWM=4,VWN=4"));
  // Four floats already fill a 16-byte load: eight take as many instructions per byte.
  CHECK(overhead("VWM=8,VWN=8") == overhead("VWM=4,VWN=4"));
  // In half precision eight fill it.
  const auto half = [&](const char* vectors) {
    const std::string c = std::string("MWG=128,NWG=128,MDIMC=16,NDIMC=16,") + vectors;
    return prior_estimate(&f.spec, f.config(c), square(4096, Precision::kFP16Acc32), counted(128),
                          f.h100, issue)
        .issue_overhead;
  };
  CHECK(half("VWM=8,VWN=8") < half("VWM=4,VWN=4"));
}

TEST_CASE("a work-group that cannot be resident is predicted 0", "[select][prior]") {
  Fixture f;
  // 1024 work-items at 255 registers: 32 waves, the H100's register file holds 8 of them.
  const Configuration c = f.config("MWG=128,NWG=256,MDIMC=32,NDIMC=32,VWM=4,VWN=8");
  const auto e = prior_estimate(&f.spec, c, square(4096), counted(255), f.h100);
  CHECK_FALSE(e.fits);
  CHECK(e.gflops == 0);
  CHECK_THAT(e.misfit, Catch::Contains("registers") && Catch::Contains("1024"));
  CHECK_THAT(e.describe(f.h100), Catch::StartsWith("cannot run"));
  // The same group at 64 registers fits.
  CHECK(prior_estimate(&f.spec, c, square(4096), counted(64), f.h100).fits);
}

TEST_CASE("an estimate above the register cap spills the excess", "[select][prior]") {
  Fixture f;
  const Problem p = square(4096);
  const Context ctx{{"ELEM_BYTES", 4}};
  const Configuration uncapped = f.config("MWG=128,NWG=128,MDIMC=8,NDIMC=16");  // 16x8 per item
  const int64_t estimate = *f.spec.registers(uncapped, ctx);
  REQUIRE(estimate > 168);
  const auto free = prior_estimate(&f.spec, uncapped, p, ResourceUsage{}, f.h100);
  CHECK_FALSE(free.measured_registers);
  CHECK(free.registers == estimate);
  CHECK(free.spills == 0);
  Configuration capped = uncapped;
  capped[f.spec.register_cap_parameter()] = 168;
  const auto cap = prior_estimate(&f.spec, capped, p, ResourceUsage{}, f.h100);
  CHECK(cap.registers == 168);
  CHECK(cap.spills == estimate - 168);
  // Measured counts are taken as they are.
  const auto measured = prior_estimate(&f.spec, capped, p, counted(160, 4), f.h100);
  CHECK(measured.measured_registers);
  CHECK(measured.registers == 160);
  CHECK(measured.spills == 4);
}

TEST_CASE("rank_by_prior puts the best prediction first and keeps ties in order",
          "[select][prior]") {
  Fixture f;
  const Problem p = square(2048);
  const Configuration a = f.config("MWG=64,NWG=64,MDIMC=8,NDIMC=8,SWZ=0");
  const Configuration twin = f.config("MWG=64,NWG=64,MDIMC=8,NDIMC=8,SWZ=1");  // unseen by it
  const Configuration better = f.config("MWG=128,NWG=128,MDIMC=16,NDIMC=16");
  const auto r = rank_by_prior(
      &f.spec, {{a, counted(96)}, {twin, counted(96)}, {better, counted(96)}}, p, f.h100);
  REQUIRE(r.size() == 3);
  CHECK(r[0].index == 2);
  CHECK(r[1].index == 0);
  CHECK(r[2].index == 1);
  CHECK(r[1].estimate.gflops == r[2].estimate.gflops);
}

TEST_CASE("fit_prior finds the constants the samples were made with", "[select][prior]") {
  Fixture f;
  PriorConstants truth;
  truth.efficiency = 0.8;
  truth.latency_cycles = 64;
  truth.spill_cost = 2;
  truth.lds_cost = 0.25;
  truth.tile_traffic_cost = 0.4;
  truth.issue_cost = 1;
  std::vector<PriorSample> samples;
  const Problem p = square(4096);
  int64_t registers = 40;
  for (const char* mwg : {"32", "64", "128"}) {
    for (const char* threads : {"MDIMC=8,NDIMC=8", "MDIMC=16,NDIMC=8", "MDIMC=16,NDIMC=16"}) {
      for (const char* vectors : {"VWM=2,VWN=2", "VWM=4,VWN=8"}) {
        const Configuration c =
            f.config(std::string("MWG=") + mwg + ",NWG=" + mwg + "," + threads + "," + vectors);
        if (f.spec.check(c, DeviceLimits{}, {{"ELEM_BYTES", 4}})) continue;
        registers = registers % 200 + 23;  // a spread of occupancies, a few spilling
        const ResourceUsage u = counted(registers, registers % 3 == 0 ? registers / 4 : 0);
        const PriorFeatures features = prior_features(&f.spec, c, p, u, f.h100);
        const double gflops = prior_from_features(features, f.h100, p, truth).gflops;
        if (gflops > 0) samples.push_back({p, c, gflops, features});
      }
    }
  }
  REQUIRE(samples.size() >= 10);
  const PriorFit fit = fit_prior(samples, f.h100, PriorGrid::standard(), 0.9);
  CHECK(fit.samples == samples.size());
  // Launch costs do not scale with the rate: the samples are its multiples within a hair.
  CHECK(fit.loss == Approx(0).margin(1e-4));
  CHECK(fit.constants.efficiency == Approx(truth.efficiency).epsilon(1e-3));
  CHECK(fit.constants.latency_cycles == truth.latency_cycles);
  CHECK(fit.constants.spill_cost == truth.spill_cost);
  CHECK(fit.constants.lds_cost == truth.lds_cost);
  CHECK(fit.constants.tile_traffic_cost == truth.tile_traffic_cost);
  CHECK(fit.constants.issue_cost == truth.issue_cost);

  CHECK_THROWS_WITH(fit_prior(samples, f.h100, PriorGrid::standard(), 1.5),
                    Catch::Contains("quantile"));
  CHECK_THROWS_AS(fit_prior({}, f.h100), Error);
}

TEST_CASE("the random baseline is the exact expectation over orderings", "[select][prior]") {
  const std::vector<double> v = {0.25, 1.0, 0.5};
  CHECK(random_top_fraction(v, 1) == Approx((1.0 + 0.5 + 0.25) / 3));
  // Pairs: {1, .5} {1, .25} {.5, .25}: best 1, 1, .5.
  CHECK(random_top_fraction(v, 2) == Approx(2.5 / 3));
  CHECK(random_top_fraction(v, 3) == 1);
  CHECK(random_top_fraction(v, 10) == 1);
  CHECK(random_top_fraction({}, 3) == 0);
}

TEST_CASE("ranking a recorded problem: ties count as a random pick, failures left out",
          "[select][prior]") {
  Fixture f;
  RecordedProblem rec;
  rec.kernel = "xgemm_fast";
  rec.problem = square(2048);
  auto add = [&](const char* c, double gflops, Status s = Status::kOk) {
    RecordedConfiguration r;
    r.config = f.config(c);
    r.status = s;
    r.gflops = gflops;
    r.usage = counted(96);
    rec.configurations.push_back(r);
  };
  // Two configurations the prior cannot tell apart (SWZ), measured 100 and 50, ahead of a small
  // tile measured 80, and a failure.
  add("MWG=128,NWG=128,MDIMC=16,NDIMC=16,SWZ=0", 50);
  add("MWG=128,NWG=128,MDIMC=16,NDIMC=16,SWZ=1", 100);
  add("MWG=32,NWG=32,MDIMC=8,NDIMC=8", 80);
  add("MWG=64,NWG=64,MDIMC=8,NDIMC=8", 0, Status::kWrongResult);
  RankValidationOptions o;
  o.top = {1, 2, 3};
  o.show = 3;
  const ProblemRanking r = validate_ranking(rec, &f.spec, f.h100, nullptr, o);
  CHECK(r.recorded == 4);
  CHECK(r.ranked == 3);
  CHECK(r.failed_left_out == 1);
  CHECK(r.from_journal == 3);
  CHECK(r.optimum_gflops == 100);
  CHECK(r.optimum_rank == 1);
  CHECK(r.optimum_ties == 1);
  REQUIRE(r.top.size() == 3);
  CHECK(r.top[0].model == Approx(0.75));  // one of the tied pair: 100 or 50
  CHECK(r.top[1].model == 1);
  CHECK(r.top[0].random == Approx((1.0 + 0.5 + 0.8) / 3));
  CHECK(r.first.size() == 3);
  CHECK(r.first[2].measured == 80);
  // With failures included the failed one is ranked too (as 0).
  o.include_failed = true;
  CHECK(validate_ranking(rec, &f.spec, f.h100, nullptr, o).ranked == 4);
}

TEST_CASE("recorded register counts: taken, or replaced where they cannot be the kernel's",
          "[select][prior]") {
  Fixture f;
  RecordedProblem rec;
  rec.kernel = "xgemm_fast";
  rec.problem = square(2048);
  RecordedConfiguration r;
  r.config = f.config("MWG=128,NWG=128,MDIMC=16,NDIMC=8");  // 8x16 accumulators
  r.gflops = 1000;
  r.usage = counted(12);  // the reduce kernel's count: fewer registers than accumulators
  rec.configurations.push_back(r);
  RecordedConfiguration spilled = r;
  spilled.config = f.config("MWG=128,NWG=128,MDIMC=8,NDIMC=8");  // 16x16 accumulators
  spilled.usage = counted(32, 1372);                             // a real count: most of it spilled
  rec.configurations.push_back(spilled);
  const ProblemRanking ranking = validate_ranking(rec, &f.spec, f.h100, nullptr, {});
  CHECK(ranking.implausible_registers == 1);
  CHECK(ranking.estimated == 1);
  CHECK(ranking.from_journal == 1);
  RankValidationOptions estimate;
  estimate.registers = RegisterSource::kEstimate;
  CHECK(validate_ranking(rec, &f.spec, f.h100, nullptr, estimate).estimated == 2);
}

TEST_CASE("a resource table restricts the ranking and gives its counts", "[select][prior]") {
  Fixture f;
  const auto dir = temp_dir("prior-table");
  RecordedProblem rec;
  rec.kernel = "xgemm_fast";
  rec.problem = square(2048);
  for (const char* c : {"MWG=64,NWG=64,MDIMC=8,NDIMC=8", "MWG=128,NWG=128,MDIMC=16,NDIMC=16"}) {
    RecordedConfiguration r;
    r.config = f.config(c);
    r.gflops = 100;
    rec.configurations.push_back(r);
  }
  {
    std::ofstream out(dir + "/res.jsonl");
    out << nlohmann::json{{"kernel", "xgemm_fast"},
                          {"config", configuration_to_json(rec.configurations[1].config)},
                          {"registers", 127},
                          {"spills", 0}}
               .dump()
        << "\n";
  }
  const ResourceTable table = ResourceTable::load(dir + "/res.jsonl");
  CHECK(table.size() == 1);
  const ProblemRanking r = validate_ranking(rec, &f.spec, f.h100, &table, {});
  CHECK(r.ranked == 1);
  CHECK(r.without_resources == 1);
  CHECK(r.from_table == 1);

  std::ofstream(dir + "/bad.jsonl") << "{\"kernel\": \"xgemm_fast\", \"config\": {}}\n"
                                    << "{\"kernel\": \"xgemm_fast\", \"config\": {}, "
                                       "\"registers\": -3}\n";
  CHECK_THROWS_WITH(ResourceTable::load(dir + "/bad.jsonl"),
                    Catch::Contains("line 2") && Catch::Contains("registers"));
  std::ofstream(dir + "/text.jsonl") << "registers 12\n";
  CHECK_THROWS_WITH(ResourceTable::load(dir + "/text.jsonl"), Catch::Contains("line 1"));
}

TEST_CASE("the prior reads the register tile and vectors by the template's roles",
          "[select][prior]") {
  Fixture f;
  // xgemm_fast's declaration under other parameter names: the roles say which is which.
  nlohmann::json j = f.spec.raw();
  j["kernel"] = "renamed";
  for (auto& p : j["parameters"]) {
    if (p["name"] == "VWM") p["name"] = "WIDTH_M";
  }
  auto rename = [](std::string text) {
    for (size_t at; (at = text.find("VWM")) != std::string::npos;) text.replace(at, 3, "WIDTH_M");
    return text;
  };
  for (auto& c : j["constraints"]) c["expr"] = rename(c["expr"].get<std::string>());
  j["roles"]["vector_m"] = "WIDTH_M";
  j.erase("spaces");
  const KernelSpec renamed = KernelSpec::from_json(j, "renamed.json");
  Configuration c = f.config(kTile);
  const Problem p = square(4096);
  const PriorFeatures expected = prior_features(&f.spec, c, p, counted(128), f.h100);
  c["WIDTH_M"] = c.at("VWM");
  c.erase("VWM");
  const PriorFeatures got = prior_features(&renamed, c, p, counted(128), f.h100);
  CHECK(got.accumulators == expected.accumulators);
  CHECK(got.issue_ratio == Approx(expected.issue_ratio));
  // Undeclared, the vector width is unknown and taken as 1: more load instructions.
  j["roles"].erase("vector_m");
  const KernelSpec undeclared = KernelSpec::from_json(j, "renamed.json");
  CHECK(prior_features(&undeclared, c, p, counted(128), f.h100).issue_ratio > got.issue_ratio);
}

}  // namespace gemmtune_tests::src_select_test_prior
