// SPDX-License-Identifier: Apache-2.0
// The A/B keep-or-revert protocol with a fake evaluator whose timings are controlled: each branch
// of the decision is forced (a clear win, a clear loss, a tie decided by simplicity, a wrong
// result, an invalid change, a failing baseline, noise wider than the threshold).
#include <cmath>
#include <filesystem>
#include <fstream>
#include <map>
#include <random>
#include <sstream>

#include <catch2/catch.hpp>

#include "search/ab/ab_protocol.hpp"
#include "src/core/error.hpp"
#include "src/core/json_util.hpp"
#include "src/db/database.hpp"
#include "tests/test_support.hpp"

// The file's own namespace: the test files compile in unity batches.
namespace gemmtune_tests::search_ab_test_ab_protocol {

using namespace gemmtune;
using gemmtune::test::source_path;
using gemmtune::test::temp_dir;

namespace {

// Answers with a fixed time per configuration, scaled by a fixed-seed normal noise of `cv`.
class FakeEvaluator : public Evaluator {
 public:
  struct Behaviour {
    double ms = 1.0;
    double cv = 0.0;
    Status status = Status::kOk;
    int fail_from_call = 0;  // with a failing status: the calls before this one succeed
  };

  explicit FakeEvaluator(uint64_t seed = 7) : rng_(seed) {}
  void set(const Configuration& c, Behaviour b) { behaviours_[to_string(c)] = b; }

  Result evaluate(const Problem& problem, const Configuration& config) override {
    calls.push_back(config);
    const Behaviour b = behaviours_.at(to_string(config));
    const int call = ++calls_of_[to_string(config)];
    if (b.status != Status::kOk && call > b.fail_from_call) {
      Result r = Result::failure(config, b.status, "fake " + to_string(b.status));
      if (b.status == Status::kWrongResult) {
        r.max_error = 0.5;
        r.tolerance = 1e-4;
      }
      return r;
    }
    Result r;
    r.config = config;
    std::normal_distribution<double> noise(0.0, b.cv);
    r.time.median_ms = b.ms * (1.0 + (b.cv > 0 ? noise(rng_) : 0.0));
    r.gflops = problem.flops() / (r.time.median_ms * 1e6);
    r.max_error = 1e-6;
    r.tolerance = 1e-4;
    return r;
  }
  std::string description() const override { return "fake"; }

  std::vector<Configuration> calls;

 private:
  std::mt19937_64 rng_;
  std::map<std::string, Behaviour> behaviours_;
  std::map<std::string, int> calls_of_;
};

Problem small_problem() {
  Problem p;
  p.shape = Shape{64, 64, 64};
  return p;
}

const Configuration kBase = {{"MWG", 64}, {"NWG", 64}, {"KWI", 2},  {"VWM", 2}, {"VWN", 2},
                             {"SA", 1},   {"SB", 1},   {"PADA", 1}, {"PADB", 1}};

Configuration with(Configuration c, const std::string& name, int64_t value) {
  c[name] = value;
  return c;
}

}  // namespace

TEST_CASE("simplicity: ordered ranks decide, unlisted parameters do not", "[ab]") {
  // Rank 1 beats everything after it: one buffer fewer wins even with a larger tile.
  auto c = compare_simplicity(with(with(kBase, "SB", 0), "MWG", 128), kBase);
  CHECK(c.order < 0);
  CHECK(c.rank == "local-memory buffers");
  CHECK(c.first_value == 1);
  CHECK(c.second_value == 2);
  // Padding before unroll.
  c = compare_simplicity(with(with(kBase, "PADA", 0), "KWI", 8), kBase);
  CHECK(c.order < 0);
  CHECK(c.rank == "padding");
  CHECK(compare_simplicity(with(kBase, "KWI", 4), kBase).order > 0);
  CHECK(compare_simplicity(with(kBase, "KWI", 1), kBase).rank == "unroll");
  // Vector widths compare as a product.
  c = compare_simplicity(with(with(kBase, "VWM", 4), "VWN", 1), kBase);
  CHECK(c.order == 0);
  CHECK(compare_simplicity(with(kBase, "VWM", 1), kBase).rank == "vector width");
  CHECK(compare_simplicity(with(kBase, "NWG", 32), kBase).rank == "tile");
  // A work-group shape is not in the table: equally simple.
  CHECK(compare_simplicity(with(kBase, "MDIMC", 8), with(kBase, "MDIMC", 16)).order == 0);
  CHECK(compare_simplicity(kBase, kBase).describe() == "equally simple");
  // The same table serves other templates' names.
  const Configuration fast = {{"STAGES", 2}, {"PADA", 0}, {"KWI", 4}};
  CHECK(compare_simplicity(with(fast, "STAGES", 1), fast).rank == "local-memory buffers");
  const Configuration direct = {{"WGD", 32}, {"KWID", 2}, {"VWMD", 2}, {"VWND", 2}};
  CHECK(compare_simplicity(with(direct, "KWID", 1), direct).rank == "unroll");
  CHECK(compare_simplicity(with(direct, "WGD", 16), direct).rank == "tile");
  CHECK(compare_simplicity(with(direct, "WGD", 16), direct).describe() ==
        "a smaller work-group tile (256 < 1024)");
}

TEST_CASE("A/B statistics: gain, paired spread, pooled cv and noise", "[ab]") {
  // Identical pairs: no noise, the threshold is the margin.
  std::vector<AbPair> pairs(5, AbPair{1.1, 1.0});
  auto s = ab_statistics(pairs, 0.02);
  CHECK(s.pairs == 5);
  CHECK(s.gain == Approx(0.1));
  CHECK(s.paired_spread == Approx(0.0).margin(1e-12));
  CHECK(s.noise == Approx(0.0).margin(1e-12));
  CHECK(s.margin == Approx(0.02));

  // Scattered pairs: the noise is 2 max(spread, cv) / sqrt(n), and it becomes the margin.
  pairs = {{1.0, 1.0}, {1.2, 1.0}, {0.8, 1.0}, {1.1, 1.0}, {0.9, 1.0}};
  s = ab_statistics(pairs, 0.02);
  const double cv_base = std::sqrt(0.1 / 4) / 1.0;  // sample sd of {1,1.2,0.8,1.1,0.9}
  CHECK(s.pooled_cv == Approx(std::sqrt(0.5 * cv_base * cv_base)));
  CHECK(s.gain == Approx(0.0).margin(1e-12));
  CHECK(s.noise == Approx(2 * std::max(s.paired_spread, s.pooled_cv) / std::sqrt(5.0)));
  CHECK(s.margin == Approx(s.noise));
  CHECK(s.noise > 0.02);

  AbSettings settings;
  CHECK(needs_more_pairs(s, settings));  // within a noise wider than the threshold
  settings.max_pairs = 5;
  CHECK_FALSE(needs_more_pairs(s, settings));
  CHECK_THROWS_AS(ab_statistics({}, 0.02), Error);
  CHECK_THROWS_AS(ab_statistics({{0.0, 1.0}}, 0.02), Error);
}

TEST_CASE("A/B settings are validated", "[ab]") {
  AbSettings s;
  CHECK_NOTHROW(s.validate());
  s.min_pairs = 0;
  CHECK_THROWS_WITH(s.validate(), Catch::Contains("--min-pairs"));
  s = AbSettings{};
  s.max_pairs = 3;
  CHECK_THROWS_WITH(s.validate(), Catch::Contains("--max-pairs"));
  s = AbSettings{};
  s.threshold = 1.5;
  CHECK_THROWS_WITH(s.validate(), Catch::Contains("threshold"));
}

TEST_CASE("A/B: a clear win is kept", "[ab]") {
  FakeEvaluator ev;
  const Configuration change = with(kBase, "KWI", 4);  // not simpler: only speed can keep it
  ev.set(kBase, {1.0, 0.005});
  ev.set(change, {0.8, 0.005});
  const AbRecord r = run_ab(ev, small_problem(), kBase, change, AbSettings{});
  CHECK(r.decision == Decision::kKeep);
  CHECK(r.reason == DecisionReason::kFaster);
  CHECK(r.stats.pairs == 5);
  CHECK(r.evaluations == 10);
  CHECK(r.stats.gain == Approx(0.25).epsilon(0.05));
  CHECK(r.kept() == change);
  CHECK(r.change == "KWI 2->4");
  CHECK(r.explanation.find("faster by") != std::string::npos);
  CHECK(r.changed.gflops > r.baseline.gflops);
  CHECK(r.baseline.gflops_spread > 0);
  // Interleaved: baseline, change, baseline, change ...
  REQUIRE(ev.calls.size() == 10);
  for (size_t i = 0; i < ev.calls.size(); ++i) CHECK(ev.calls[i] == (i % 2 ? change : kBase));
}

TEST_CASE("A/B: a clear loss is reverted, even when simpler", "[ab]") {
  FakeEvaluator ev;
  const Configuration change = with(kBase, "SB", 0);  // simpler, but slower
  ev.set(kBase, {1.0, 0.005});
  ev.set(change, {1.25, 0.005});
  const AbRecord r = run_ab(ev, small_problem(), kBase, change, AbSettings{});
  CHECK(r.decision == Decision::kRevert);
  CHECK(r.reason == DecisionReason::kSlower);
  CHECK(r.simplicity.order < 0);
  CHECK(r.kept() == kBase);
  CHECK(r.stats.gain == Approx(-0.2).epsilon(0.05));
}

TEST_CASE("A/B: a tie is decided by simplicity", "[ab]") {
  SECTION("the simpler change is kept") {
    FakeEvaluator ev;
    const Configuration change = with(kBase, "KWI", 1);
    ev.set(kBase, {1.0, 0.002});
    ev.set(change, {1.005, 0.002});  // 0.5% slower: within the 2% threshold
    const AbRecord r = run_ab(ev, small_problem(), kBase, change, AbSettings{});
    CHECK(r.decision == Decision::kKeep);
    CHECK(r.reason == DecisionReason::kTieSimpler);
    CHECK(r.stats.margin == Approx(0.02));  // the noise is below the threshold
    CHECK(r.stats.pairs == 5);              // a clear tie needs no more pairs
    CHECK(r.explanation.find("a smaller unroll (1 < 2)") != std::string::npos);
  }
  SECTION("a change that is not simpler is reverted") {
    FakeEvaluator ev;
    const Configuration change = with(kBase, "KWI", 4);
    ev.set(kBase, {1.0, 0.002});
    ev.set(change, {0.995, 0.002});  // 0.5% faster: within the threshold
    const AbRecord r = run_ab(ev, small_problem(), kBase, change, AbSettings{});
    CHECK(r.decision == Decision::kRevert);
    CHECK(r.reason == DecisionReason::kTieNotSimpler);
    CHECK(r.explanation.find("not simpler") != std::string::npos);
  }
  SECTION("an equally simple change is reverted") {
    FakeEvaluator ev;
    const Configuration change = with(kBase, "MDIMC", 8);
    Configuration base = with(kBase, "MDIMC", 16);
    ev.set(base, {1.0, 0.0});
    ev.set(change, {0.99, 0.0});
    const AbRecord r = run_ab(ev, small_problem(), base, change, AbSettings{});
    CHECK(r.reason == DecisionReason::kTieNotSimpler);
    CHECK(r.explanation.find("equally simple") != std::string::npos);
  }
}

TEST_CASE("A/B: a wrong result is reverted at once with its reason", "[ab]") {
  FakeEvaluator ev;
  const Configuration change = with(kBase, "VWM", 4);
  ev.set(kBase, {1.0, 0.0});
  ev.set(change, {0.5, 0.0, Status::kWrongResult});  // would be much faster
  const AbRecord r = run_ab(ev, small_problem(), kBase, change, AbSettings{});
  CHECK(r.decision == Decision::kRevert);
  CHECK(r.reason == DecisionReason::kChangeFailed);
  CHECK(r.changed.status == Status::kWrongResult);
  CHECK(r.evaluations == 2);
  CHECK(r.explanation.find("wrong_result") != std::string::npos);
  CHECK(r.explanation.find("tolerance") != std::string::npos);

  SECTION("also when it fails after some good pairs") {
    FakeEvaluator ev2;
    ev2.set(kBase, {1.0, 0.0});
    FakeEvaluator::Behaviour b{0.5, 0.0, Status::kWrongResult, 3};
    ev2.set(change, b);
    const AbRecord r2 = run_ab(ev2, small_problem(), kBase, change, AbSettings{});
    CHECK(r2.reason == DecisionReason::kChangeFailed);
    CHECK(r2.evaluations == 8);
  }
}

TEST_CASE("A/B: an invalid change is reverted with the constraint that refuses it", "[ab]") {
  const KernelSpec spec = KernelSpec::load(source_path("kernel_templates/xgemm.json"));
  const Configuration base = spec.defaults();
  const Configuration change = with(base, "MWG", 8);  // MWG % (MDIMC * VWM) fails
  auto inner = std::make_unique<FakeEvaluator>();
  inner->set(base, {1.0, 0.0});
  FakeEvaluator* fake = inner.get();
  CheckedEvaluator ev(std::move(inner), spec, DeviceLimits{});
  const AbRecord r = run_ab(ev, small_problem(), base, change, AbSettings{});
  CHECK(r.reason == DecisionReason::kChangeFailed);
  CHECK(r.changed.status == Status::kInvalid);
  CHECK(r.explanation.find("whole vectors of VWM") != std::string::npos);
  CHECK(fake->calls.size() == 1);  // only the baseline reached the evaluator
}

TEST_CASE("A/B: a failing baseline gives no comparison", "[ab]") {
  FakeEvaluator ev;
  const Configuration change = with(kBase, "KWI", 4);
  ev.set(kBase, {1.0, 0.0, Status::kCompileFailed});
  ev.set(change, {0.5, 0.0});
  const AbRecord r = run_ab(ev, small_problem(), kBase, change, AbSettings{});
  CHECK(r.reason == DecisionReason::kBaselineFailed);
  CHECK(r.decision == Decision::kRevert);
  CHECK(r.evaluations == 1);
}

TEST_CASE("A/B: noise wider than the threshold", "[ab]") {
  SECTION("a 3% gain inside 15% noise is not a win, after the most pairs") {
    FakeEvaluator ev(11);
    const Configuration change = with(kBase, "KWI", 4);
    ev.set(kBase, {1.0, 0.15});
    ev.set(change, {1.0 / 1.03, 0.15});
    AbSettings settings;
    settings.max_pairs = 12;
    const AbRecord r = run_ab(ev, small_problem(), kBase, change, settings);
    CHECK(r.stats.noise > 0.02);
    CHECK(r.stats.margin == Approx(r.stats.noise));
    CHECK(std::fabs(r.stats.gain) <= r.stats.noise);
    CHECK(r.stats.pairs == 12);
    CHECK(r.reason == DecisionReason::kTieNotSimpler);
    CHECK(r.explanation.find("noise") != std::string::npos);
  }
  SECTION("more pairs resolve a large gain hidden at first") {
    FakeEvaluator ev(5);
    const Configuration change = with(kBase, "KWI", 4);
    ev.set(kBase, {1.0, 0.1});
    ev.set(change, {1.0 / 1.08, 0.1});
    const AbRecord r = run_ab(ev, small_problem(), kBase, change, AbSettings{});
    CHECK(r.stats.pairs > 5);
    CHECK(r.stats.pairs <= 20);
    CHECK(r.decision == Decision::kKeep);
    CHECK(r.reason == DecisionReason::kFaster);
  }
  SECTION("stop_early ends the extra pairs") {
    FakeEvaluator ev(11);
    const Configuration change = with(kBase, "KWI", 4);
    ev.set(kBase, {1.0, 0.15});
    ev.set(change, {1.0, 0.15});
    const AbRecord r =
        run_ab(ev, small_problem(), kBase, change, AbSettings{}, {}, [] { return true; });
    CHECK(r.stats.pairs == 5);
  }
}

TEST_CASE("A/B: indicators from the bottleneck report", "[ab]") {
  const KernelSpec spec = KernelSpec::load(source_path("kernel_templates/xgemm.json"));
  const Configuration c = spec.defaults();
  FakeEvaluator ev;
  const Configuration change = with(c, "VWM", 4);
  ev.set(c, {1.0, 0.0});
  ev.set(change, {1.0, 0.0});
  // Without a device profile: the spec's figures only. Defaults: MWG = NWG = 64, KWG = 32,
  // MDIMC = NDIMC = 16, VWM = VWN = 2, padding 1, fp32.
  const AbRecord r = run_ab(ev, small_problem(), c, change, AbSettings{},
                            report_indicator_function(spec, nullptr, DatabaseDevice{}));
  CHECK(r.baseline.indicators.get("lds") == Approx(4 * 2 * 32 * (64 + 1)));
  CHECK(r.baseline.indicators.get("work_group_size") == Approx(256));
  CHECK(r.baseline.indicators.get("registers") == Approx(16 + 4 + 4 + 12));
  CHECK(r.baseline.indicators.get("work_per_thread") == Approx(16));
  CHECK(r.baseline.indicators.get("vector_width") == Approx(4));
  CHECK(r.changed.indicators.get("vector_width") == Approx(8));
  CHECK_FALSE(r.baseline.indicators.get("occupancy"));  // needs a profile
}

TEST_CASE("A/B logs: Markdown changelog and JSON lines", "[ab]") {
  const std::string dir = temp_dir("ab-log");
  FakeEvaluator ev;
  const Configuration win = with(kBase, "KWI", 4), bad = with(kBase, "VWM", 4);
  ev.set(kBase, {1.0, 0.0});
  ev.set(win, {0.8, 0.0});
  ev.set(bad, {0.8, 0.0, Status::kWrongResult});
  const AbRecord keep = run_ab(ev, small_problem(), kBase, win, AbSettings{});
  const AbRecord revert = run_ab(ev, small_problem(), kBase, bad, AbSettings{});

  ChangelogHeader header;
  header.title = "Test run";
  header.fields = {{"device", "fake | device"}, {"date", "2026-01-01"}};
  const std::string md = dir + "/changes.md";
  {
    MarkdownChangelog log(md, header);
    log.note("Before the table.");
    log.append(keep);
    log.append(revert);
    log.note("Outcome: done.");
  }
  std::string text = read_text_file(md);
  CHECK(text.rfind("# Test run\n", 0) == 0);
  CHECK(text.find("- device: fake | device") != std::string::npos);
  CHECK(text.find("Before the table.\n\n| Date | Change |") != std::string::npos);
  CHECK(text.find("| `KWI 2->4` | 0.52 ± 0.00 → 0.66 ± 0.00 (+25.0%") != std::string::npos);
  CHECK(text.find("**KEEP**: faster by 25.0%") != std::string::npos);
  CHECK(text.find("→ wrong_result | **REVERT**: the change failed") != std::string::npos);
  CHECK(text.find("|\n\nOutcome: done.\n") != std::string::npos);
  // A second run on the same file adds a section with its own table.
  {
    header.title = "Second run";
    MarkdownChangelog log(md, header);
    log.append(keep);
  }
  text = read_text_file(md);
  CHECK(text.find("\n## Second run\n") != std::string::npos);
  size_t heads = 0;
  for (size_t at = text.find("| Date |"); at != std::string::npos;
       at = text.find("| Date |", at + 1)) {
    ++heads;
  }
  CHECK(heads == 2);

  const std::string jl = dir + "/decisions.jsonl";
  {
    DecisionLog log(jl);
    log.append(keep);
  }
  {
    DecisionLog log(jl);  // appends, never truncates
    log.append(revert);
  }
  std::ifstream in(jl);
  std::vector<AbRecord> back;
  for (std::string line; std::getline(in, line);) {
    const auto j = nlohmann::json::parse(line);
    CHECK(j.at("type") == "decision");
    back.push_back(j.get<AbRecord>());
  }
  REQUIRE(back.size() == 2);
  CHECK(back[0].decision == Decision::kKeep);
  CHECK(back[0].baseline.config == kBase);
  CHECK(back[0].changed.times_ms == keep.changed.times_ms);
  CHECK(back[0].stats.gain == Approx(keep.stats.gain));
  CHECK(back[1].reason == DecisionReason::kChangeFailed);
  CHECK(back[1].changed.status == Status::kWrongResult);
}

TEST_CASE("simplicity: a template's roles decide, whatever its parameters are called", "[ab]") {
  const KernelSpec spec = KernelSpec::from_json(nlohmann::json::parse(R"({
    "kernel": "other_names", "source": "other_names.cl", "entry": "other_names",
    "parameters": [
      {"name": "TM", "values": [32, 64], "default": 64},
      {"name": "TN", "values": [32, 64], "default": 64},
      {"name": "UNR", "values": [1, 2, 4], "default": 2},
      {"name": "WX", "values": [8, 16], "default": 8}
    ],
    "launch": {"local": ["WX"], "global": ["ceil_div(M, TM) * WX"]},
    "roles": {"tile_m": "TM", "tile_n": "TN", "unroll_k": "UNR", "threads_m": "WX"}
  })"),
                                                "other_names.json");
  const Configuration base = spec.defaults();
  const Context ctx{{"ELEM_BYTES", 4}};
  auto c = compare_simplicity(with(base, "TM", 32), base, &spec, ctx);
  CHECK(c.order < 0);
  CHECK(c.rank == "tile");
  CHECK(c.first_value == 32 * 64);
  // Unroll ranks before the tile.
  c = compare_simplicity(with(with(base, "TM", 32), "UNR", 4), base, &spec, ctx);
  CHECK(c.order > 0);
  CHECK(c.rank == "unroll");
  // A work-group shape stays out of it; by the conventional names nothing here is known.
  CHECK(compare_simplicity(with(base, "WX", 16), base, &spec, ctx).order == 0);
  CHECK(compare_simplicity(with(base, "TM", 32), base).order == 0);

  // run_ab judges a tie by the template's roles.
  FakeEvaluator ev;
  const Configuration smaller = with(base, "TM", 32);
  ev.set(base, {1.0, 0.0});
  ev.set(smaller, {1.0, 0.0});
  const AbRecord r = run_ab(ev, &spec, small_problem(), base, smaller, AbSettings{});
  CHECK(r.decision == Decision::kKeep);
  CHECK(r.reason == DecisionReason::kTieSimpler);
  CHECK(r.simplicity.rank == "tile");
  // Without it, the same tie is not simpler.
  const AbRecord blind = run_ab(ev, small_problem(), base, smaller, AbSettings{});
  CHECK(blind.reason == DecisionReason::kTieNotSimpler);
}

}  // namespace gemmtune_tests::search_ab_test_ab_protocol
