// The one chooser (src/select/chooser.hpp) that the library, bench-suite's direct column and its
// library column share: every kernel's entries compete, layers in priority order, stale entries
// passed over with a note, databases of other devices left out, the fallbacks last.
#include <map>

#include <catch2/catch.hpp>

#include "src/select/chooser.hpp"
#include "tests/test_support.hpp"

// The file's own namespace: the test files compile in unity batches.
namespace gemmtune_tests::src_select_test_chooser {

using namespace gemmtune;
using gemmtune::test::source_path;

namespace {

constexpr const char* kDeviceName = "Chooser Test GPU";

// The repository's templates, loaded once.
const KernelSpec* spec_of(const std::string& kernel) {
  static std::map<std::string, KernelSpec> specs;
  auto it = specs.find(kernel);
  if (it == specs.end()) {
    it = specs.emplace(kernel, KernelSpec::load_named(source_path("kernel_templates"), kernel))
             .first;
  }
  return &it->second;
}

DatabaseEntry entry(const std::string& kernel, Shape shape, double gflops) {
  DatabaseEntry e;
  e.key.kernel = kernel;
  e.key.shape = shape;
  e.parameters = spec_of(kernel)->defaults();
  e.gflops = gflops;
  return e;
}

Database database(const std::vector<DatabaseEntry>& entries,
                  const std::string& device = kDeviceName) {
  Database db;
  db.device.name = device;
  for (const auto& e : entries) db.put(e, true);
  return db;
}

DeviceInfo device() {
  DeviceInfo d;
  d.name = kDeviceName;
  d.compute_units = 64;
  d.max_clock_mhz = 1500;
  return d;
}

Problem problem(Shape s) {
  Problem p;
  p.shape = s;
  return p;
}

Choices choose(const std::vector<ChooserLayer>& layers, const Problem& p,
               const Refusal& unusable = nullptr) {
  return choose_configurations(
      layers, p, device(), nullptr, [](const std::string& k) { return spec_of(k); }, unusable);
}

bool has_note(const Choices& c, const std::string& text) {
  for (const auto& n : c.notes) {
    if (n.find(text) != std::string::npos) return true;
  }
  return false;
}

}  // namespace

TEST_CASE("chooser: the safe path and the fallback kernels are data in one place", "[select]") {
  CHECK(std::string(kSafePathKernel) == "xgemm_direct");
  CHECK(fallback_kernels() == std::vector<std::string>{"xgemm_fast", "xgemm_direct"});
}

TEST_CASE("chooser: every kernel's exact entry competes, xgemm_skinny included", "[select]") {
  const Shape s{8, 4096, 4096};
  const Database db = database({entry("xgemm_fast", s, 3000), entry("xgemm_skinny", s, 5000),
                                entry("xgemm_direct", s, 1000)});
  const Choices c = choose({{"user database", "db.json", &db}}, problem(s));
  REQUIRE(c.choices.size() == 4);  // the entry, the two templates' defaults, the fallback
  CHECK(c.choices[0].spec->name() == "xgemm_skinny");
  CHECK(c.choices[0].kind == "exact");
  CHECK(c.choices[0].exact);
  CHECK(c.choices[0].origin == "db.json");
  CHECK(c.choices[0].source == "user database");
  CHECK(c.choices[0].gflops == 5000);
  CHECK(c.choices[0].tuned_shape == s);
  CHECK(c.choices[1].kind == "defaults");
  CHECK(c.choices[1].spec->name() == "xgemm_fast");
  CHECK(c.choices[2].spec->name() == "xgemm_direct");
}

TEST_CASE("chooser: an untuned shape gets the model's pick, with the entry it comes from",
          "[select]") {
  const Database db = database(
      {entry("xgemm_fast", {1024, 1024, 1024}, 900), entry("xgemm_fast", {64, 64, 64}, 20)});
  const Choices c = choose({{"user database", "db.json", &db}}, problem({1000, 1000, 1000}));
  REQUIRE_FALSE(c.choices.empty());
  CHECK(c.choices[0].kind == "model");
  CHECK_FALSE(c.choices[0].exact);
  CHECK(c.choices[0].tuned_shape == Shape{1024, 1024, 1024});
  CHECK(c.choices[0].predicted_gflops > 0);
  CHECK(c.choices[0].distance > 0);
}

TEST_CASE("chooser: layers keep their order, and another device's database is left out",
          "[select]") {
  const Shape s{256, 256, 256};
  const Database user = database({entry("xgemm_direct", s, 10)});
  const Database system = database({entry("xgemm_fast", s, 500)});
  const Database foreign = database({entry("xgemm", s, 9000)}, "Another GPU");
  const Choices c = choose({{"user database", "user.json", &foreign},
                            {"user database", "mine.json", &user},
                            {"system database", "system.json", &system},
                            {"compiled-in database", "results/x.json", &foreign, false}},
                           problem(s));
  REQUIRE(c.choices.size() == 5);  // two databases, two templates' defaults, one fallback
  CHECK(c.choices[0].origin == "mine.json");
  CHECK(c.choices[0].spec->name() == "xgemm_direct");
  CHECK(c.choices[1].origin == "system.json");
  CHECK(c.choices[1].spec->name() == "xgemm_fast");
  CHECK(has_note(c, "user.json not used: it was tuned on Another GPU"));
  CHECK_FALSE(has_note(c, "results/x.json"));  // every device's: no news
}

TEST_CASE("chooser: a stale entry is passed over with a note, never an error", "[select]") {
  const Shape s{128, 128, 128};
  DatabaseEntry stale = entry("xgemm_fast", s, 9000);
  stale.parameters["NO_SUCH_PARAMETER"] = 3;
  const Database db = database({stale, entry("xgemm", s, 40)});
  Choices c;
  REQUIRE_NOTHROW(c = choose({{"user database", "db.json", &db}}, problem(s)));
  REQUIRE_FALSE(c.choices.empty());
  CHECK(c.choices[0].spec->name() == "xgemm");
  CHECK(c.choices[0].kind == "exact");
  CHECK(has_note(c, "passed over: stale (the template has no parameter NO_SUCH_PARAMETER)"));
}

TEST_CASE("chooser: what the device refuses is passed over, down to the fallbacks", "[select]") {
  const Shape s{64, 64, 64};
  const Database db = database({entry("xgemm_fast", s, 100)});
  const Refusal no_fast = [](const KernelSpec& spec, const Configuration&) -> std::string {
    return spec.name() == "xgemm_fast" ? "refused here" : "";
  };
  const Choices c = choose({{"user database", "db.json", &db}}, problem(s), no_fast);
  REQUIRE(c.choices.size() == 2);
  CHECK(c.choices[0].spec->name() == "xgemm_direct");
  CHECK(c.choices[0].kind == "defaults");
  CHECK(c.choices[0].source == "compiled-in default");
  CHECK(c.choices[1].spec->name() == "xgemm_direct");
  CHECK(c.choices[1].kind == "fallback");
  CHECK(c.choices[1].config == *spec_of("xgemm_direct")->fallback());
  CHECK(has_note(c, "xgemm_fast"));
  CHECK(has_note(c, "the defaults of xgemm_fast passed over: refused here"));

  // Nothing at all: only the fallback templates' defaults in their order, then their declared
  // fallbacks (a single work-item), which fit the smallest limits a device may report.
  const Choices none = choose({}, problem(s));
  const size_t n = fallback_kernels().size();
  REQUIRE(none.choices.size() == n + 1);
  for (size_t i = 0; i < n; ++i) {
    CHECK(none.choices[i].spec->name() == fallback_kernels()[i]);
    CHECK(none.choices[i].config == spec_of(fallback_kernels()[i])->defaults());
  }
  const Choice& last = none.choices.back();
  CHECK(last.kind == "fallback");
  const Context ctx{{"ELEM_BYTES", 4}};
  CHECK(last.spec->work_group_size(last.config, ctx) == 1);
}

}  // namespace gemmtune_tests::src_select_test_chooser
