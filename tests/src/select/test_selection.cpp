// SPDX-License-Identifier: Apache-2.0
// Choosing a configuration: exact entries first, the model's ranking otherwise, the safe path
// where a baseline is predicted to win, and candidates from databases and journals.
#include <fstream>

#include <catch2/catch.hpp>

#include "src/core/error.hpp"
#include "src/db/journal.hpp"
#include "src/select/selection.hpp"
#include "tests/test_support.hpp"

// The file's own namespace: the test files compile in unity batches.
namespace gemmtune_tests::src_select_test_selection {

using namespace gemmtune;
using gemmtune::test::temp_dir;

namespace {

DatabaseEntry entry(const std::string& kernel, Shape shape, double gflops, Configuration params) {
  DatabaseEntry e;
  e.key.kernel = kernel;
  e.key.shape = shape;
  e.parameters = std::move(params);
  e.gflops = gflops;
  return e;
}

Configuration tile(int64_t mwg, int64_t nwg, int64_t split = 1) {
  return {{"MWG", mwg}, {"NWG", nwg}, {"KWG", 16}, {"SPLITK", split}};
}

Problem target(Shape s) {
  Problem p;
  p.shape = s;
  return p;
}

// 64 compute units, a bandwidth, no launch cost: the geometry decides.
DeviceModel device() {
  DeviceModel d;
  d.compute_units = 64;
  d.bandwidth_gbs = 500;
  return d;
}

SelectOptions options() {
  SelectOptions o;
  o.constants.launch_us = 0;
  o.constants.bandwidth_efficiency = 0.5;
  o.constants.distance_penalty = 0.05;
  return o;
}

// The selection for the xgemm_fast FP32 row-major problem `p` from `pool`.
Selection select_for(const CandidatePool& pool, const Problem& p,
                     const SelectOptions& o = options()) {
  return select_configuration(pool.candidates(), EntryKey::of("xgemm_fast", p), p, device(), o);
}

// The eight corners of the box from `lo` to `hi`.
std::vector<Shape> corners(const Shape& lo, const Shape& hi) {
  std::vector<Shape> out;
  for (int64_t m : {lo.m, hi.m}) {
    for (int64_t n : {lo.n, hi.n}) {
      for (int64_t k : {lo.k, hi.k}) out.push_back({m, n, k});
    }
  }
  return out;
}

// The measured step's choice at `at` under `rule`.
Selection measured_pick(const CandidatePool& pool, const Shape& at, const MeasuredRule& rule) {
  SelectOptions o = options();
  o.measured = rule;
  Selection s = select_for(pool, target(at), o);
  CHECK(s.kind == Selection::Kind::kMeasured);
  return s;
}

Database database(const std::vector<DatabaseEntry>& entries) {
  Database db;
  db.device.name = "Test GPU";
  for (const auto& e : entries) db.put(e, true);
  return db;
}

}  // namespace

TEST_CASE("selection: an entry of the problem's shape comes first", "[select]") {
  CandidatePool pool;
  pool.add_database(database({entry("xgemm_fast", {512, 512, 512}, 900, tile(64, 64)),
                              entry("xgemm_fast", {4096, 4096, 4096}, 2000, tile(128, 128))}),
                    "db.json");
  const Problem p = target({512, 512, 512});
  const Selection s = select_for(pool, p);
  REQUIRE(s.chosen);
  CHECK(s.kind == Selection::Kind::kExact);
  CHECK(s.chosen->parameters == tile(64, 64));
  CHECK(s.chosen->estimate.gflops == 900);
  CHECK(s.chosen->from.entry == "xgemm_fast fp32 row NN b1 512x512x512");
  CHECK_THAT(s.reason, Catch::Contains("tuned for this shape"));
  CHECK(s.ranked.size() == 2);
}

TEST_CASE("selection: an untuned shape gets the configuration predicted fastest", "[select]") {
  // Tuned for 4096^3: a 128x128 tile without split-K, and for 256x256x8192: 32x32 tiles split 8
  // ways. At 256x256x16384 the big tile makes 4 groups for 64 units; the split one fills them.
  CandidatePool pool;
  pool.add_database(database({entry("xgemm_fast", {4096, 4096, 4096}, 2000, tile(128, 128)),
                              entry("xgemm_fast", {256, 256, 8192}, 800, tile(32, 32, 8))}),
                    "db.json");
  const Problem p = target({256, 256, 16384});
  const Selection s = select_for(pool, p);
  REQUIRE(s.chosen);
  CHECK(s.kind == Selection::Kind::kModel);
  CHECK(s.chosen->parameters == tile(32, 32, 8));
  REQUIRE(s.ranked.size() == 2);
  CHECK(s.ranked[0].score >= s.ranked[1].score);
  CHECK(s.ranked[1].estimate.work_groups == 4);
  CHECK_THAT(s.reason, Catch::Contains("predicted") && Catch::Contains("256x256x8192") &&
                           Catch::Contains("db.json entry"));
  REQUIRE(s.rejected.size() == 1);
  CHECK_THAT(s.rejected[0], Catch::Contains("MWG=128") && Catch::Contains("4096x4096x4096"));
  // At 4096x4096x8192 the big tile has groups enough, and the split one's partial products
  // would cross memory: the big tile wins.
  const Problem big = target({4096, 4096, 8192});
  const Selection b = select_for(pool, big);
  CHECK(b.chosen->parameters == tile(128, 128));
  // Deterministic: the same inputs give the same ranking.
  const Selection again = select_for(pool, p);
  REQUIRE(again.ranked.size() == s.ranked.size());
  for (size_t i = 0; i < s.ranked.size(); ++i) {
    CHECK(again.ranked[i].parameters == s.ranked[i].parameters);
    CHECK(again.ranked[i].score == s.ranked[i].score);
  }
}

TEST_CASE("selection: configurations measured at nearby shapes decide before the model",
          "[select]") {
  // Eight tiles measured at the eight corners of a box around 1000x1000x1000; the 64x64 one is
  // the fastest at every corner, though a far entry of a 128x128 tile promises more.
  Database db = database({entry("xgemm_fast", {8192, 8192, 8192}, 9000, tile(128, 128))});
  const EntryKey family = EntryKey::of("xgemm_fast", target({1, 1, 1}));
  const std::vector<int64_t> sides = {8, 16, 32, 64, 128, 256, 512, 1024};
  for (const Shape& at : corners({724, 724, 724}, {1448, 1448, 1448})) {
    for (int64_t side : sides) {
      const double gflops = side == 64 ? 1000 : 500 + side / 8.0;
      db.add_measurement(family, tile(side, side), at, gflops);
    }
  }
  CandidatePool pool;
  pool.add_database(db, "db.json");
  const Selection s = select_for(pool, target({1000, 1000, 1000}));
  REQUIRE(s.chosen);
  CHECK(s.kind == Selection::Kind::kMeasured);
  CHECK(s.chosen->parameters == tile(64, 64));
  CHECK_THAT(s.reason, Catch::Contains("100% of the fastest measured") &&
                           Catch::Contains("8 measured shapes nearest"));
  // Far from every measured shape, or with the step off, the model decides.
  const Selection far = select_for(pool, target({8000, 8000, 8000}));
  CHECK(far.kind == Selection::Kind::kModel);
  SelectOptions off = options();
  off.measured.neighbours = 0;
  CHECK(select_for(pool, target({1000, 1000, 1000}), off).kind == Selection::Kind::kModel);
  // Fewer configurations than min_configs at a shape: not a cross-measurement.
  SelectOptions strict = options();
  strict.measured.min_configs = 9;
  CHECK(select_for(pool, target({1000, 1000, 1000}), strict).kind == Selection::Kind::kModel);
  // At a measured shape, its fastest configuration is taken as tuned there.
  const Selection at = select_for(pool, target({724, 724, 724}));
  CHECK(at.kind == Selection::Kind::kExact);
  CHECK(at.chosen->parameters == tile(64, 64));
}

TEST_CASE("selection: the measured step weighs a near shape above far ones by its decay",
          "[select]") {
  // At 1024^3, next to the problem, the 32x32 tile is the fastest; at the seven corners of a box
  // further out the 64x64 one is. Unweighted, the seven outvote the one; with a steep decay the
  // nearest shape decides.
  Database db = database({entry("xgemm_fast", {8192, 8192, 8192}, 9000, tile(128, 128))});
  const EntryKey family = EntryKey::of("xgemm_fast", target({1, 1, 1}));
  const std::vector<int64_t> fillers = {8, 16, 128, 256, 512, 1024};
  auto measure = [&](const Shape& at, double small_tile, double mid_tile) {
    db.add_measurement(family, tile(32, 32), at, small_tile);
    db.add_measurement(family, tile(64, 64), at, mid_tile);
    for (int64_t side : fillers) db.add_measurement(family, tile(side, side), at, 300);
  };
  measure({1024, 1024, 1024}, 1000, 700);
  for (const Shape& at : corners({724, 724, 724}, {1448, 1448, 1448})) {
    if (at == Shape{1448, 1448, 1448}) continue;
    measure(at, 600, 1000);
  }
  CandidatePool pool;
  pool.add_database(db, "db.json");
  auto pick = [&](double decay) {
    MeasuredRule rule;
    rule.decay = decay;
    return measured_pick(pool, {1000, 1000, 1000}, rule);
  };
  const Selection flat = pick(0);
  REQUIRE(flat.chosen);
  CHECK(flat.chosen->parameters == tile(64, 64));
  CHECK_THAT(flat.reason, !Catch::Contains("nearer weighing more"));
  const Selection steep = pick(10);
  REQUIRE(steep.chosen);
  CHECK(steep.chosen->parameters == tile(32, 32));
  CHECK_THAT(steep.reason, Catch::Contains("nearer weighing more"));
}

TEST_CASE("selection: where measured means nearly tie the model's view of the problem decides",
          "[select]") {
  // Around 1050x1050x1000 the 128x128 tile ran 1% faster than the 64x64 one at every measured
  // shape, sides that both tiles divide; at the problem itself nine 128-wide tiles cover 1152 of a
  // side (10% padding) and seventeen 64-wide ones 1088 (4%). Either of the model's two terms, its
  // change from the measured shapes to the problem or its prediction there, sees that.
  Database db = database({entry("xgemm_fast", {8192, 8192, 8192}, 9000, tile(128, 128))});
  const EntryKey family = EntryKey::of("xgemm_fast", target({1, 1, 1}));
  const std::vector<int64_t> fillers = {8, 16, 32, 256, 512, 1024};
  for (const Shape& at : corners({1024, 1024, 896}, {1152, 1152, 1152})) {
    db.add_measurement(family, tile(128, 128), at, 1010);
    db.add_measurement(family, tile(64, 64), at, 1000);
    for (int64_t side : fillers) db.add_measurement(family, tile(side, side), at, 300);
  }
  CandidatePool pool;
  pool.add_database(db, "db.json");
  auto pick = [&](double model_weight, double transfer_weight) {
    MeasuredRule rule;
    rule.model_weight = model_weight;
    rule.transfer_weight = transfer_weight;
    Selection s = measured_pick(pool, {1050, 1050, 1000}, rule);
    REQUIRE(s.chosen);
    return s;
  };
  const Selection means = pick(0, 0);
  CHECK(means.chosen->parameters == tile(128, 128));
  CHECK_THAT(means.reason, !Catch::Contains("counts in the ranking"));
  CHECK_THAT(means.reason, !Catch::Contains("the model puts it"));
  const Selection prediction = pick(0.25, 0);
  CHECK(prediction.chosen->parameters == tile(64, 64));
  CHECK_THAT(prediction.reason, Catch::Contains("counts in the ranking at weight 0.25"));
  const Selection change = pick(0, 0.5);
  CHECK(change.chosen->parameters == tile(64, 64));
  CHECK_THAT(change.reason, Catch::Contains("the model puts it"));
  CHECK_THAT(change.reason, Catch::Contains("(weight 0.5)"));
  const MeasuredRule defaults = SelectionPolicy::defaults().measured;
  const Selection both = pick(defaults.model_weight, defaults.transfer_weight);
  CHECK(both.chosen->parameters == tile(64, 64));
}

TEST_CASE("selection: only the problem's family counts, and unusable candidates are noted",
          "[select]") {
  DatabaseEntry nt = entry("xgemm_fast", {512, 512, 512}, 5000, tile(16, 16));
  nt.key.layout = "NT";
  DatabaseEntry fp64 = entry("xgemm_fast", {512, 512, 512}, 5000, tile(16, 32));
  fp64.key.precision = Precision::kFP64;
  DatabaseEntry failed = entry("xgemm_fast", {512, 512, 512}, 5000, tile(32, 16));
  failed.status = Status::kWrongResult;
  CandidatePool pool;
  pool.add_database(
      database({nt, fp64, failed, entry("xgemm", {1024, 1024, 1024}, 10, tile(64, 64)),
                entry("xgemm_fast", {2048, 2048, 2048}, 20, tile(64, 32))}),
      "db.json");
  CHECK(pool.candidates().size() == 4);  // the failed entry is none
  const Problem p = target({512, 512, 512});
  SelectOptions o = options();
  o.unusable = [](const SelectionCandidate& c) -> std::optional<Note> {
    if (c.kernel != "xgemm") return std::nullopt;
    return Note{Note::Kind::kUnusable, "exceeds this device: too big"};
  };
  const Selection s = select_for(pool, p, o);
  REQUIRE(s.chosen);
  CHECK(s.chosen->kernel == "xgemm_fast");
  CHECK(s.chosen->parameters == tile(64, 32));
  CHECK(s.ranked.size() == 1);
  REQUIRE(s.notes.size() == 1);
  CHECK(s.notes[0].kind == Note::Kind::kUnusable);
  CHECK_THAT(s.notes[0].text, Catch::Contains("xgemm KWG=16,MWG=64") && Catch::Contains("too big"));
  // Nothing of the family: no choice, and why.
  Problem col = p;
  col.order = Order::kColMajor;
  const Selection none = select_for(pool, col, o);
  CHECK(none.kind == Selection::Kind::kNone);
  CHECK_FALSE(none.chosen);
}

TEST_CASE("selection: the safe path where the baseline is predicted to win", "[select]") {
  DatabaseEntry slow = entry("xgemm_fast", {1024, 1024, 1024}, 100, tile(64, 64));
  slow.baseline = Baseline{400, "clblast"};
  CandidatePool pool;
  pool.add_database(database({slow}), "db.json");
  SelectOptions o = options();
  o.safe_kernel = "xgemm_direct";
  o.safe_parameters = {{"WGD", 32}};
  const Problem p = target({1000, 1000, 1000});
  const Selection s = select_for(pool, p, o);
  REQUIRE(s.chosen);
  CHECK(s.kind == Selection::Kind::kSafePath);
  CHECK(s.chosen->kernel == "xgemm_direct");
  CHECK(s.chosen->parameters == Configuration{{"WGD", 32}});
  REQUIRE(s.baseline_gflops);
  CHECK(*s.baseline_gflops > 100);
  CHECK(s.chosen->estimate.gflops == *s.baseline_gflops);
  CHECK_THAT(s.reason, Catch::Contains("safe path") && Catch::Contains("loses to the baseline") &&
                           Catch::Contains("clblast measured 400"));
  CHECK_THAT(s.rejected.at(0), Catch::Contains("MWG=64"));
  // At its own shape too: an exact entry slower than its baseline is not run.
  const Problem own = target({1024, 1024, 1024});
  CHECK(select_for(pool, own, o).kind == Selection::Kind::kSafePath);
  // Without a safe path the choice stands, and the reason says it may lose.
  const Selection stay = select_for(pool, p);
  CHECK(stay.kind == Selection::Kind::kModel);
  CHECK_THAT(stay.reason, Catch::Contains("no safe path"));
  // Another candidate predicted to beat the baseline is taken instead of the safe path.
  pool.add_database(database({entry("xgemm_fast", {2048, 2048, 2048}, 3000, tile(128, 64))}),
                    "fast.json");
  const Selection other = select_for(pool, p, o);
  CHECK(other.kind == Selection::Kind::kModel);
  CHECK(other.chosen->parameters == tile(128, 64));
  CHECK_THAT(other.reason, Catch::Contains("beats the baseline"));
  // A baseline slower than the prediction changes nothing.
  DatabaseEntry fast = slow;
  fast.gflops = 1000;
  fast.baseline = Baseline{50, "xgemm_direct defaults"};
  CandidatePool quick;
  quick.add_database(database({fast}), "db.json");
  const Selection win = select_for(quick, p, o);
  CHECK(win.kind == Selection::Kind::kModel);
  CHECK_THAT(win.reason, Catch::Contains("beats the baseline"));
}

TEST_CASE("selection: journals add their fastest results per problem", "[select]") {
  const std::string dir = temp_dir("select-journal");
  const std::string path = dir + "/search.jsonl";
  {
    JournalWriter w(path, JournalOpen::kCreate);
    w.write_header({{"kernel", "xgemm_fast"}});
    Problem p = target({777, 777, 777});
    for (int i = 0; i < 5; ++i) {
      Result r;
      r.config = tile(16 << (i % 3), 32, 1 + i);
      r.gflops = 100.0 * (i + 1);
      r.time.median_ms = p.flops() / (r.gflops * 1e6);  // a result that ran took time
      w.append("xgemm_fast", p, r, 0.1 * i);
    }
    Result bad;
    bad.config = tile(8, 8);
    bad.status = Status::kWrongResult;
    bad.gflops = 9999;
    w.append("xgemm_fast", p, bad, 1);
  }
  CandidatePool pool;
  pool.add_journal(path, 2);
  REQUIRE(pool.candidates().size() == 2);
  CHECK(pool.candidates()[0].measurements[0].gflops == 500);
  CHECK(pool.candidates()[1].measurements[0].gflops == 400);
  CHECK(pool.candidates()[0].measurements[0].source == MeasurementSource::kJournal);
  // The same configuration in a database joins the journal's candidate.
  pool.add_database(database({entry("xgemm_fast", {512, 512, 512}, 50, tile(32, 32, 5))}),
                    "db.json");
  REQUIRE(pool.candidates().size() == 2);
  CHECK(pool.candidates()[0].measurements.size() == 2);
  const Problem p = target({777, 777, 700});
  const Selection s = select_for(pool, p);
  REQUIRE(s.chosen);
  CHECK(s.chosen->from.source == MeasurementSource::kJournal);  // 777^3 is nearer than 512^3
  CHECK_THROWS_AS(pool.add_journal(dir + "/missing.jsonl", 2), Error);
}

}  // namespace gemmtune_tests::src_select_test_selection
