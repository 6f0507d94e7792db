// SPDX-License-Identifier: Apache-2.0
#include <catch2/catch.hpp>

#include "src/db/database.hpp"
#include "src/device/device_profile.hpp"
#include "src/kernel/kernel_spec.hpp"
#include "src/report/report.hpp"
#include "tests/test_support.hpp"

// The file's own namespace: the test files compile in unity batches.
namespace gemmtune_tests::src_report_test_report {

using namespace gemmtune;
using gemmtune::test::source_path;

namespace {

DeviceProfile profile(const std::string& name) {
  return load_profile(source_path("devices/" + name + ".json"));
}

KernelSpec spec(const std::string& name) {
  return KernelSpec::load(source_path("kernel_templates/" + name + ".json"));
}

DatabaseEntry xgemm_entry() {
  DatabaseEntry e;
  e.key.kernel = "clblast-xgemm";
  e.key.shape = Shape{1024, 1024, 1024};
  e.parameters = {{"MWG", 64},  {"NWG", 64},  {"KWG", 32},  {"MDIMC", 16}, {"NDIMC", 16},
                  {"MDIMA", 16}, {"NDIMB", 16}, {"KWI", 2},  {"VWM", 2},    {"VWN", 2},
                  {"STRM", 0},  {"STRN", 0},  {"SA", 1},    {"SB", 1},     {"GEMMK", 0},
                  {"KREG", 1}};
  e.gflops = 2850.5;
  return e;
}

DatabaseDevice gfx1012_device() {
  DatabaseDevice d;
  d.name = "gfx1012";
  d.type = "gpu";
  d.profile = "gfx1012";
  d.compute_units = 22;
  d.max_clock_mhz = 1845;
  return d;
}

}  // namespace

TEST_CASE("occupancy on gfx906 follows its register allocation", "[report]") {
  const auto p = profile("gfx906");
  // 256 VGPRs per lane, granule 4, at most 10 waves per SIMD.
  const std::vector<std::pair<int64_t, int64_t>> cases = {
      {1, 10},  {21, 10}, {24, 10}, {25, 9},  {32, 8}, {33, 7},  {48, 5},
      {49, 4},  {64, 4},  {65, 3},  {84, 3},  {85, 2}, {128, 2}, {129, 1}, {256, 1}};
  for (const auto& [regs, waves] : cases) {
    INFO(regs << " VGPRs");
    const auto o = estimate_occupancy(p, regs, 0, 256);
    CHECK(o.waves == waves);
    CHECK(o.allocated_registers % 4 == 0);
    CHECK(o.wavefront == 64);
  }
  CHECK(estimate_occupancy(p, 84, 0, 256).allocated_registers == 84);
  CHECK(estimate_occupancy(p, 85, 0, 256).allocated_registers == 88);
  CHECK(estimate_occupancy(p, 24, 0, 256).limiter == "hardware");
  CHECK(estimate_occupancy(p, 64, 0, 256).limiter == "registers");
}

TEST_CASE("occupancy on gfx1012 in wave32", "[report]") {
  const auto p = profile("gfx1012");
  // 1024 VGPRs per lane in wave32, granule 8, at most 20 waves per SIMD.
  auto o = estimate_occupancy(p, 128, 0, 256);
  CHECK(o.wavefront == 32);
  CHECK(o.waves == 8);
  CHECK(o.limiter == "registers");
  CHECK(estimate_occupancy(p, 121, 0, 256).waves == 8);  // rounded up to 128
  CHECK(estimate_occupancy(p, 129, 0, 256).waves == 7);  // 136 allocated
  CHECK(estimate_occupancy(p, 40, 0, 256).waves == 20);  // 25 by registers, capped at 20
  CHECK(estimate_occupancy(p, 256, 0, 256).waves == 4);
}

TEST_CASE("occupancy limited by LDS", "[report]") {
  // gfx906: 64 KiB per CU; 16 KiB per work-group gives 4 groups of 4 wave64 (256 work-items)
  // on 4 SIMDs: 4 waves per SIMD.
  auto o = estimate_occupancy(profile("gfx906"), 24, 16384, 256);
  CHECK(o.waves_by_lds == 4);
  CHECK(o.waves == 4);
  CHECK(o.limiter == "LDS");
  // gfx1012: 64 KiB per CU; 32 KiB per group gives 2 groups of 8 wave32 on 2 SIMDs: 8 waves.
  o = estimate_occupancy(profile("gfx1012"), 64, 32768, 256);
  CHECK(o.waves_by_registers == 16);
  CHECK(o.waves_by_lds == 8);
  CHECK(o.waves == 8);
  CHECK(o.limiter == "LDS");
  // More LDS than a CU holds: nothing fits.
  CHECK(estimate_occupancy(profile("gfx1012"), 64, 70000, 256).waves == 0);
}

TEST_CASE("report of a CLBlast Xgemm entry on gfx1012, by hand", "[report]") {
  const auto s = spec("clblast-xgemm");
  const auto p = profile("gfx1012");
  const auto r = analyze_entry(xgemm_entry(), &s, &p, gfx1012_device());
  CHECK(r.notes.empty());
  // LDS: 4 bytes x (32x64 + 32x64) = 16384 bytes.
  const auto* lds = r.item("lds");
  REQUIRE(lds);
  CHECK(*lds->value == 16384);
  CHECK(lds->value_text == "16.0 KiB");
  CHECK(lds->verdict == Verdict::kOk);
  CHECK_THAT(lds->basis, Catch::Contains("estimate"));
  // Registers: MWI = NWI = 4: (16 + 4 + 4) + 12 = 36.
  const auto* regs = r.item("registers");
  REQUIRE(regs);
  CHECK(*regs->value == 36);
  CHECK(regs->verdict == Verdict::kOk);
  // 36 -> 40 allocated: 25 waves by registers, capped at 20; LDS: 4 groups x 8 waves / 2 SIMDs.
  const auto* occ = r.item("occupancy");
  REQUIRE(occ);
  CHECK(*occ->value == 16);
  CHECK_THAT(occ->value_text, Catch::Contains("LDS"));
  CHECK(occ->verdict == Verdict::kOk);
  CHECK(*r.item("wave_utilization")->value == 100);
  CHECK(*r.item("work_per_thread")->value == 16);
  CHECK(*r.item("vector_width")->value == 4);
  // 2*64*64 / (4*(64+64)) = 16 FLOP/byte, below the ridge 5196/224 = 23.2: memory-bound.
  const auto* bound = r.item("bound");
  CHECK(*bound->value == Approx(16.0));
  CHECK(bound->verdict == Verdict::kWarn);
  CHECK_THAT(bound->value_text, Catch::Contains("memory-bound"));
  // 2850.5 of 5196 GFLOPS.
  CHECK(*r.item("peak")->value == Approx(2850.5 / 5196 * 100));
  CHECK(r.item("peak")->verdict == Verdict::kOk);
  // 16 x 16 work-groups on 22 CUs.
  CHECK(*r.item("parallelism")->value == Approx(256.0 / 22));
}

TEST_CASE("report prefers measured figures and flags spills", "[report]") {
  const auto s = spec("clblast-xgemm");
  const auto p = profile("gfx1012");
  auto e = xgemm_entry();
  e.usage.registers = 128;
  e.usage.local_mem_bytes = 16384;
  e.usage.spills = 0;
  e.usage.source = "AMDGPU metadata";
  auto r = analyze_entry(e, &s, &p, gfx1012_device());
  CHECK(*r.item("registers")->value == 128);
  CHECK_THAT(r.item("registers")->basis, Catch::Contains("measured (AMDGPU metadata)"));
  CHECK(r.item("registers")->verdict == Verdict::kOk);  // 128 <= 1024/4
  CHECK(*r.item("occupancy")->value == 8);              // now limited by registers
  CHECK_THAT(r.item("occupancy")->value_text, Catch::Contains("registers"));
  e.usage.registers = 300;
  e.usage.spills = 12;
  r = analyze_entry(e, &s, &p, gfx1012_device());
  CHECK(r.item("registers")->verdict == Verdict::kBad);
  CHECK_THAT(r.item("registers")->note, Catch::Contains("12 spilled"));
}

TEST_CASE("report reads direct-kernel tiles through derived values", "[report]") {
  const auto s = spec("clblast-xgemm-direct");
  const auto p = profile("gfx906");
  DatabaseEntry e;
  e.key.kernel = "clblast-xgemm-direct";
  e.key.precision = Precision::kFP64;
  e.key.shape = Shape{256, 256, 256};
  e.parameters = s.defaults();  // WGD 32, 8x8 threads, PADA = PADB = 1
  e.gflops = 100;
  DatabaseDevice d;
  d.profile = "gfx906";
  d.compute_units = 60;
  const auto r = analyze_entry(e, &s, &p, d);
  // 8 bytes x 32 x (32 + 1 + 32 + 1) = 16896 bytes.
  CHECK(*r.item("lds")->value == 16896);
  CHECK(*r.item("work_per_thread")->value == 16);
  // 2*32*32 / (8*(32+32)) = 4 FLOP/byte.
  CHECK(*r.item("bound")->value == Approx(4.0));
  // gfx906 has no fp64 peak figure: that item says so instead of guessing.
  CHECK(r.item("peak")->verdict == Verdict::kUnknown);
  // 64 work-items in one wave64.
  CHECK(*r.item("wave_utilization")->value == 100);
}

TEST_CASE("report without spec or profile says what it cannot tell", "[report]") {
  auto e = xgemm_entry();
  e.key.kernel = "unknown_kernel";
  const auto r = analyze_entry(e, nullptr, nullptr, gfx1012_device());
  CHECK(r.item("lds")->verdict == Verdict::kUnknown);
  CHECK(r.item("occupancy")->verdict == Verdict::kUnknown);
  // Tile values still come from the parameters.
  CHECK(*r.item("work_per_thread")->value == 16);
  CHECK(r.notes.size() == 2);
}

TEST_CASE("CPU peak is computed from compute units and clock", "[report]") {
  const auto p = profile("cpu-generic");
  DatabaseDevice d;
  d.type = "cpu";
  d.compute_units = 2;
  d.max_clock_mhz = 2500;
  CHECK(*peak_gflops(p, Precision::kFP32, d) == Approx(2 * 2500 * 64 / 1000.0));
  CHECK(*peak_gflops(profile("gfx906"), Precision::kFP16, d) == 26496);
  CHECK_FALSE(peak_gflops(profile("gfx906"), Precision::kFP64, d));
  auto e = xgemm_entry();
  e.gflops = 32;
  const auto s = spec("clblast-xgemm");
  const auto r = analyze_entry(e, &s, &p, d);
  CHECK(*r.item("peak")->value == Approx(10.0));
  CHECK(r.item("occupancy")->verdict == Verdict::kUnknown);  // not meaningful on a CPU
}

TEST_CASE("database report renders Markdown and JSON", "[report]") {
  const auto db = Database::load(source_path("tests/data/db_gfx1012.json"));
  const auto p = profile("gfx1012");
  const auto report = analyze_database(db, source_path("kernel_templates"), &p);
  REQUIRE(report.entries.size() == db.entries().size());
  // The fixture's xgemm_fast entry predates the LDS parameter: estimated with the default, said.
  bool noted = false;
  for (const auto& e : report.entries) {
    for (const auto& n : e.notes) {
      const auto listed = n.find("template defaults: ");
      noted = noted || (listed != std::string::npos && n.find("LDS", listed) != std::string::npos);
    }
  }
  CHECK(noted);
  const std::string md = to_markdown(report);
  CHECK_THAT(md, Catch::Contains("# Bottleneck report: gfx1012"));
  CHECK_THAT(md, Catch::Contains("## xgemm fp32 row NN b1 1024x1024x1024"));
  CHECK_THAT(md, Catch::Contains("| check | value | target | verdict | basis |"));
  const nlohmann::json j = report;
  REQUIRE(j["entries"].size() == db.entries().size());
  for (const auto& e : j["entries"]) {
    CHECK(e["items"].size() >= 8);
    for (const auto& i : e["items"]) {
      const std::string v = i["verdict"];
      CHECK((v == "ok" || v == "warn" || v == "bad" || v == "n/a"));
    }
  }
}

TEST_CASE("work-groups per compute unit count split-K and batches", "[report]") {
  const auto s = spec("xgemm_fast");
  const auto p = profile("gfx1012");
  DatabaseEntry e;
  e.key.kernel = "xgemm_fast";
  // Row-major: the kernel's M is 4096 (32 tiles of 128) and its N 64 (one tile).
  e.key.shape = Shape{64, 4096, 4096};
  e.parameters = s.complete({{"MWG", 128}, {"NWG", 64}, {"SPLITK", 1}});
  e.gflops = 1000;
  const auto parallelism = [&](const KernelSpec* kernel_spec) {
    const auto r = analyze_entry(e, kernel_spec, &p, gfx1012_device());
    REQUIRE(r.item("parallelism"));
    return *r.item("parallelism");
  };
  auto item = parallelism(&s);
  CHECK(*item.value == Approx(32.0 / 22));  // gfx1012_device() has 22 CUs
  CHECK_THAT(item.value_text, Catch::Contains("(32 work-groups, 22 CUs)"));
  // Split-K runs SPLITK work-groups per tile.
  e.parameters["SPLITK"] = 8;
  item = parallelism(&s);
  CHECK(*item.value == Approx(256.0 / 22));
  CHECK_THAT(item.value_text, Catch::Contains("(256 work-groups"));
  CHECK(item.verdict == Verdict::kOk);
  // A batch runs them all once per entry.
  e.key.batch = 3;
  item = parallelism(&s);
  CHECK(*item.value == Approx(768.0 / 22));
  // Without the template the parameters give the same count.
  item = parallelism(nullptr);
  CHECK(*item.value == Approx(768.0 / 22));
}

TEST_CASE("the report reads a template's tile by its roles, whatever the names", "[report]") {
  nlohmann::json j = nlohmann::json::parse(R"({
    "kernel": "other_names", "source": "other_names.cl", "entry": "other_names",
    "parameters": [
      {"name": "TM", "values": [64], "default": 64},
      {"name": "TN", "values": [32], "default": 32},
      {"name": "TK", "values": [8], "default": 8},
      {"name": "WX", "values": [8], "default": 8},
      {"name": "WY", "values": [4], "default": 4},
      {"name": "V", "values": [2], "default": 2}
    ],
    "work_group_size": "WX * WY",
    "launch": {"local": ["WX", "WY"], "global": ["ceil_div(M, TM) * WX", "ceil_div(N, TN) * WY"]},
    "roles": {"tile_m": "TM", "tile_n": "TN", "tile_k": "TK", "threads_m": "WX",
              "threads_n": "WY", "vector_m": "V", "vector_n": "V"}
  })");
  const KernelSpec s = KernelSpec::from_json(j, "other_names.json");
  DatabaseEntry e;
  e.key.kernel = "other_names";
  e.key.shape = Shape{1024, 1024, 1024};
  e.parameters = s.defaults();
  e.gflops = 100;
  const auto p = profile("gfx1012");
  auto r = analyze_entry(e, &s, &p, gfx1012_device());
  // No register tile declared: tile / threads, (64 / 8) x (32 / 4).
  CHECK(*r.item("work_per_thread")->value == 64);
  CHECK(*r.item("vector_width")->value == 4);
  // 2*64*32 / (4*(64+32)) FLOP/byte.
  CHECK(*r.item("bound")->value == Approx(2.0 * 64 * 32 / (4.0 * 96)));
  j.erase("roles");
  const KernelSpec bare = KernelSpec::from_json(j, "other_names.json");
  r = analyze_entry(e, &bare, &p, gfx1012_device());
  CHECK(r.item("work_per_thread")->verdict == Verdict::kUnknown);
  CHECK(r.item("vector_width")->verdict == Verdict::kUnknown);
  CHECK(r.item("bound")->verdict == Verdict::kUnknown);
  // Without the template at all: the conventional names, which these are not, and a note.
  r = analyze_entry(e, nullptr, &p, gfx1012_device());
  CHECK(r.item("work_per_thread")->verdict == Verdict::kUnknown);
  bool said = false;
  for (const auto& n : r.notes)
    said = said || n.find("conventional parameter names") != std::string::npos;
  CHECK(said);
}

}  // namespace gemmtune_tests::src_report_test_report
