// SPDX-License-Identifier: Apache-2.0
// The one chooser (src/select/chooser.hpp) that the library, bench-suite's direct column and its
// library column and `db lookup` share: every kernel's entries compete, layers in priority order,
// stale entries passed over with a note, databases of other devices left out, the problem relaxed
// as the profile's policy says, the fallbacks last.
#include <algorithm>
#include <map>
#include <utility>

#include <catch2/catch.hpp>

#include "src/select/chooser.hpp"
#include "tests/test_support.hpp"

// The file's own namespace: the test files compile in unity batches.
namespace gemmtune_tests::src_select_test_chooser {

using namespace gemmtune;
using gemmtune::test::fast_64x64;
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
               const Refusal& unusable = nullptr, const DeviceProfile* profile = nullptr) {
  return choose_configurations(
      layers, p, device(), profile, [](const std::string& k) { return spec_of(k); }, unusable);
}

bool has_note(const Choices& c, const std::string& text) {
  for (const auto& n : c.notes) {
    if (n.text.find(text) != std::string::npos) return true;
  }
  return false;
}

// The repository's cpu-generic profile with `selection` as its "selection" section.
DeviceProfile profile_with(const nlohmann::json& selection) {
  DeviceProfile p = load_profile(source_path("devices/cpu-generic.json"));
  p.selection = selection;
  return p;
}

// What the library refuses of every template: an epilogue it does not fuse.
std::string no_epilogue(const Problem& p, const KernelSpec& spec) {
  return !p.epilogue.none() && spec.name() != "xgemm_fast" ? "no fused epilogue" : "";
}

// The first choice for shape `s` from `db` alone, as a user database, under `profile`.
Choice chosen(const Database& db, Shape s, const DeviceProfile* profile) {
  const Choices c = choose({{"user database", "db.json", &db}}, problem(s), nullptr, profile);
  REQUIRE_FALSE(c.choices.empty());
  return c.choices[0];
}

}  // namespace

TEST_CASE("chooser: the fallback policy and the model's constants are profile data over defaults",
          "[select]") {
  const SelectionPolicy& d = SelectionPolicy::defaults();
  CHECK(SelectionPolicy::of(nullptr).default_kernels == d.default_kernels);
  CHECK(d.safe_path_kernel == "xgemm_direct");
  CHECK(d.default_kernels == std::vector<std::string>{"xgemm_fast", "xgemm_direct"});
  CHECK(d.relaxations == std::vector<Relaxation>{Relaxation::kStorageOrder, Relaxation::kEpilogue,
                                                 Relaxation::kBatchCount});
  // Every shipped profile's section reads.
  const ProfileSet shipped = ProfileSet::load_dir(source_path("devices"));
  for (const auto& p : shipped.profiles()) {
    INFO(p.file);
    CHECK_NOTHROW(SelectionPolicy::of(&p));
  }
  // A profile states what differs; the rest stays the defaults.
  const DeviceProfile own = profile_with(
      {{"source", "a calibration of this class"},
       {"model", {{"launch_us", 9}}},
       {"measured",
        {{"decay", 0.5}, {"neighbours", 4}, {"model_weight", 0}, {"transfer_weight", 1}}},
       {"relaxations", {"epilogue"}},
       {"default_kernels", {"xgemm_direct"}},
       {"safe_path_kernel", ""}});
  const SelectionPolicy p = SelectionPolicy::of(&own);
  CHECK(p.model.launch_us == 9);
  CHECK(p.model.rate_cap == d.model.rate_cap);
  CHECK(p.measured.decay == 0.5);
  CHECK(p.measured.neighbours == 4);
  CHECK(p.measured.model_weight == 0);
  CHECK(d.measured.model_weight > 0);
  CHECK(p.measured.transfer_weight == 1);
  CHECK(d.measured.transfer_weight != 1);
  CHECK(p.measured.max_distance == d.measured.max_distance);
  CHECK(p.relaxations == std::vector<Relaxation>{Relaxation::kEpilogue});
  CHECK(p.default_kernels == std::vector<std::string>{"xgemm_direct"});
  CHECK(p.safe_path_kernel.empty());
  CHECK(p.skinny_side == d.skinny_side);
  CHECK(p.aligned_copy.max_share == d.aligned_copy.max_share);
  CHECK_FALSE(d.aligned_copy.on());
  CHECK_FALSE(d.producer_rows.on());
  CHECK(p.source == "a calibration of this class");
  // ... and the chooser follows it: only xgemm_direct's defaults remain, then its fallback.
  const Choices c = choose({}, problem({64, 64, 64}), nullptr, &own);
  REQUIRE(c.choices.size() == 2);
  CHECK(c.choices[0].spec->name() == "xgemm_direct");
  CHECK(c.choices[1].kind == ChoiceKind::kFallback);
  // A wrong section names the profile's file and the field.
  for (const auto& [bad, field] : std::vector<std::pair<nlohmann::json, std::string>>{
           {{{"model", {{"launch_us", 1}}}}, "selection.source"},
           {{{"source", "x"}, {"model", {{"no_such", 1}}}}, "selection.model.no_such"},
           {{{"source", "x"}, {"model", {{"launch_us", -1}}}}, "selection.model.launch_us"},
           {{{"source", "x"}, {"relaxations", {"shape"}}}, "selection.relaxations"},
           {{{"source", "x"}, {"relaxations", {"epilogue", "epilogue"}}}, "selection.relaxations"},
           {{{"source", "x"}, {"skinny_side", 1.5}}, "selection.skinny_side"},
           {{{"source", "x"}, {"measured", {{"decay", -1}}}}, "selection.measured.decay"},
           {{{"source", "x"}, {"measured", {{"decay", "steep"}}}}, "selection.measured.decay"},
           {{{"source", "x"}, {"measured", {{"nearest", 4}}}}, "selection.measured.nearest"},
           {{{"source", "x"}, {"measured", {{"model_weight", -0.5}}}},
            "selection.measured.model_weight"},
           {{{"source", "x"}, {"measured", {{"transfer_weight", "half"}}}},
            "selection.measured.transfer_weight"},
           {{{"source", "x"}, {"aligned_copy", {{"max_share", -1}}}},
            "selection.aligned_copy.max_share"},
           {{{"source", "x"}, {"aligned_copy", {{"share", 0.1}}}}, "selection.aligned_copy.share"},
           {{{"source", "x"}, {"producer_rows", {{"max_groups_per_cu", -2}}}},
            "selection.producer_rows.max_groups_per_cu"},
           {{{"source", "x"}, {"producer_rows", {{"stages", 1}}}},
            "selection.producer_rows.stages"},
           {{{"source", "x"}, {"producer_rows", {{"groups", 2}}}},
            "selection.producer_rows.groups"},
           {{{"source", "x"}, {"producer_rows", {{"min_k_tiles", -1}}}},
            "selection.producer_rows.min_k_tiles"},
           {{{"source", "x"}, {"producer_rows", {{"k_major_b_min_tile_k", 1.5}}}},
            "selection.producer_rows.k_major_b_min_tile_k"},
           {{{"source", "x"}, {"half_loads", {{"min_k", -1}}}}, "selection.half_loads.min_k"},
           {{{"source", "x"}, {"half_loads", {{"k", 256}}}}, "selection.half_loads.k"},
           {{{"source", "x"}, {"half_loads", {{"without", 3}}}}, "selection.half_loads.without"},
           {{{"source", "x"}, {"split_k", {{"values", {2, 0}}}}}, "selection.split_k.values"},
           {{{"source", "x"}, {"split_k", {{"values", nlohmann::json::array()}}}},
            "selection.split_k.values"},
           {{{"source", "x"}, {"split_k", {{"launch_us", -2}}}}, "selection.split_k.launch_us"},
           {{{"source", "x"}, {"split_k", {{"min_gain", 1}}}}, "selection.split_k.min_gain"},
           {{{"source", "x"}, {"split_k", {{"splits", {2}}}}}, "selection.split_k.splits"},
           {{{"source", "x"}, {"fallback", {}}}, "selection.fallback"}}) {
    INFO(bad.dump());
    const DeviceProfile wrong = profile_with(bad);
    CHECK_THROWS_WITH(SelectionPolicy::of(&wrong),
                      Catch::Contains("cpu-generic.json") && Catch::Contains(field));
  }
}

// A configuration of xgemm_fast with 64x64 tiles, 16x8 work-items and register prefetch, at
// shape `shape`, without producer rows.
DatabaseEntry multiplier_entry(Shape shape, double gflops) {
  DatabaseEntry e = entry("xgemm_fast", shape, gflops);
  for (const auto& [name, value] : fast_64x64({{"PREFETCH", 1}, {"STAGES", 1}})) {
    e.parameters[name] = value;
  }
  return e;
}

TEST_CASE("chooser: producer rows are decided by the work-groups a compute unit gets", "[select]") {
  const DeviceProfile h200 = load_profile(source_path("devices/sm_90.json"));
  const Database db = database({multiplier_entry({724, 724, 256}, 12000)});
  // 600x500: 8 x 10 tiles of 64x64, 80 work-groups on the 64 units the chooser is told of.
  const Choice few = chosen(db, {600, 500, 187}, &h200);
  CHECK(few.kind == ChoiceKind::kModel);
  CHECK(few.config.at("WSP") == 8);
  CHECK(few.config.at("PREFETCH") == 0);
  CHECK(few.config.at("STAGES") == 2);
  CHECK_THAT(few.reason, Catch::Contains("WSP=8") && Catch::Contains("80 work-groups") &&
                             Catch::Contains("12 K tiles each"));
  // Its K tile of 16 is as deep as the profile's k_major_b_min_tile_k: the K-major B tile too.
  CHECK(few.config.at("BKM") == 1);
  CHECK_THAT(few.reason, Catch::Contains("BKM=1") && Catch::Contains("K tile 16"));
  // A K tile of 8: producer rows without it.
  DatabaseEntry shallow = multiplier_entry({724, 724, 256}, 12000);
  shallow.parameters["KWG"] = 8;
  const Choice shallow_few = chosen(database({shallow}), {600, 500, 187}, &h200);
  CHECK(shallow_few.config.at("WSP") == 8);
  CHECK(shallow_few.config.at("BKM") == 0);
  CHECK_THAT(shallow_few.reason, !Catch::Contains("BKM"));
  // Padding of B that the K-major tile's four-wide reads do not take: producer rows without it.
  DatabaseEntry padded = multiplier_entry({724, 724, 256}, 12000);
  padded.parameters["PADB"] = 2;
  const Choice padded_few = chosen(database({padded}), {600, 500, 187}, &h200);
  CHECK(padded_few.config.at("WSP") == 8);
  CHECK(padded_few.config.at("BKM") == 0);
  // A device that refuses the K-major form (its local memory, say): producer rows without it.
  const Refusal no_k_major = [](const KernelSpec&, const Configuration& c) -> std::string {
    return c.count("BKM") && c.at("BKM") == 1 ? "no K-major B tile here" : "";
  };
  const Choices refused =
      choose({{"user database", "db.json", &db}}, problem({600, 500, 187}), no_k_major, &h200);
  REQUIRE_FALSE(refused.choices.empty());
  CHECK(refused.choices[0].config.at("WSP") == 8);
  CHECK(refused.choices[0].config.at("BKM") == 0);
  CHECK_THAT(refused.choices[0].reason, Catch::Contains("WSP=8") && !Catch::Contains("BKM"));
  // The same work-groups with 3 K tiles each, fewer than the profile's 4: as measured.
  CHECK(chosen(db, {600, 500, 40}, &h200).config.at("WSP") == 0);
  // 2048x2048: 1024 work-groups, 16 a unit: as measured.
  const Choice many = chosen(db, {2048, 2048, 256}, &h200);
  CHECK(many.config.at("WSP") == 0);
  CHECK(many.config.at("PREFETCH") == 1);
  CHECK_THAT(many.reason, !Catch::Contains("WSP"));
  // The shape's own entry runs as measured.
  CHECK(chosen(db, {724, 724, 256}, &h200).config.at("WSP") == 0);
  // A profile that does not state the rule (AMD's, or none): as measured.
  DeviceProfile unstated = h200;
  unstated.selection.erase("producer_rows");
  CHECK(chosen(db, {600, 500, 187}, &unstated).config.at("WSP") == 0);
  CHECK(chosen(db, {600, 500, 187}, nullptr).config.at("WSP") == 0);
  // 16 rows that multiply would want 16 producer rows, which the template does not take.
  DatabaseEntry wide = multiplier_entry({724, 724, 256}, 12000);
  wide.parameters["NDIMC"] = 16;
  wide.parameters["VWN"] = 2;
  CHECK(chosen(database({wide}), {600, 500, 187}, &h200).config.at("WSP") == 0);
}

TEST_CASE("chooser: a column-major problem takes the row-major entry of the same kernel view",
          "[select]") {
  // Row-major 64x48 with B transposed is, column-major, the 48x64 problem with A transposed.
  DatabaseEntry e = entry("xgemm_fast", {64, 48, 32}, 700);
  e.key.layout = "NT";
  const Database db = database({e, entry("xgemm", {64, 48, 32}, 100)});
  Problem col = problem({48, 64, 32});
  col.order = Order::kColMajor;
  col.trans_a = true;
  const Choices c = choose({{"user database", "db.json", &db}}, col);
  REQUIRE_FALSE(c.choices.empty());
  CHECK(c.choices[0].kind == ChoiceKind::kExact);
  CHECK(c.choices[0].spec->name() == "xgemm_fast");
  CHECK(c.choices[0].relaxed == "storage order");
  REQUIRE(c.choices[0].selection);
  CHECK(c.choices[0].selection->ranked.size() == 1);  // the NN entry is of another view
  // A policy without the relaxation leaves the problem to the defaults.
  const DeviceProfile strict = profile_with({{"source", "x"}, {"relaxations", {"epilogue"}}});
  const Choices none = choose({{"user database", "db.json", &db}}, col, nullptr, &strict);
  REQUIRE_FALSE(none.choices.empty());
  CHECK(none.choices[0].kind == ChoiceKind::kDefaults);
}

TEST_CASE("chooser: an epilogue problem takes the entry without it that can fuse one", "[select]") {
  const Shape s{96, 80, 64};
  const Database db = database({entry("xgemm_fast", s, 300), entry("xgemm", s, 900)});
  Problem p = problem(s);
  p.epilogue = parse_epilogue("bias,relu");
  const Refusal refusal = [&](const KernelSpec& spec, const Configuration&) {
    return no_epilogue(p, spec);
  };
  const Choices c = choose({{"user database", "db.json", &db}}, p, refusal);
  REQUIRE_FALSE(c.choices.empty());
  // xgemm's entry is faster, but it fuses no epilogue: passed over with a note.
  CHECK(c.choices[0].kind == ChoiceKind::kExact);
  CHECK(c.choices[0].spec->name() == "xgemm_fast");
  CHECK(c.choices[0].relaxed == "epilogue");
  CHECK(has_note(c, "no fused epilogue"));
  // Batched, in the other order, with the epilogue: every relaxation at once still finds it.
  Problem far = p;
  far.order = Order::kColMajor;
  std::swap(far.shape.m, far.shape.n);
  far.batch = 4;
  const Choices relaxed = choose({{"user database", "db.json", &db}}, far, refusal);
  REQUIRE_FALSE(relaxed.choices.empty());
  CHECK(relaxed.choices[0].spec->name() == "xgemm_fast");
  CHECK(relaxed.choices[0].relaxed == "storage order, epilogue, batch count");
  CHECK(relaxed.choices[0].kind == ChoiceKind::kModel);  // one GEMM predicted at a batch of 4
}

TEST_CASE("chooser: every kernel's exact entry competes, xgemm_skinny included", "[select]") {
  const Shape s{8, 4096, 4096};
  const Database db = database({entry("xgemm_fast", s, 3000), entry("xgemm_skinny", s, 5000),
                                entry("xgemm_direct", s, 1000)});
  const Choices c = choose({{"user database", "db.json", &db}}, problem(s));
  REQUIRE(c.choices.size() == 4);  // the entry, the two templates' defaults, the fallback
  CHECK(c.choices[0].spec->name() == "xgemm_skinny");
  CHECK(c.choices[0].kind == ChoiceKind::kExact);
  CHECK(c.choices[0].exact);
  CHECK(c.choices[0].origin == "db.json");
  CHECK(c.choices[0].source == "user database");
  CHECK(c.choices[0].gflops == 5000);
  CHECK(c.choices[0].tuned_shape == s);
  CHECK(c.choices[1].kind == ChoiceKind::kDefaults);
  CHECK(c.choices[1].spec->name() == "xgemm_fast");
  CHECK(c.choices[2].spec->name() == "xgemm_direct");
}

TEST_CASE("chooser: an untuned shape gets the model's pick, with the entry it comes from",
          "[select]") {
  const Database db = database(
      {entry("xgemm_fast", {1024, 1024, 1024}, 900), entry("xgemm_fast", {64, 64, 64}, 20)});
  const Choices c = choose({{"user database", "db.json", &db}}, problem({1000, 1000, 1000}));
  REQUIRE_FALSE(c.choices.empty());
  CHECK(c.choices[0].kind == ChoiceKind::kModel);
  CHECK_FALSE(c.choices[0].exact);
  CHECK(c.choices[0].tuned_shape == Shape{1024, 1024, 1024});
  CHECK(c.choices[0].predicted_gflops > 0);
  CHECK(c.choices[0].distance > 0);
}

// A configuration of xgemm_fast with wide loads (GLV 4) and its aligned copies as `copy` says.
DatabaseEntry wide_entry(Shape shape, double gflops, int64_t copy) {
  DatabaseEntry e = entry("xgemm_fast", shape, gflops);
  for (const auto& [name, value] : Configuration{{"GLV", 4},
                                                 {"MWG", 128},
                                                 {"NWG", 128},
                                                 {"MDIMC", 16},
                                                 {"NDIMC", 16},
                                                 {"KWG", 8},
                                                 {"VWM", 2},
                                                 {"VWN", 8},
                                                 {"LDS", 1},
                                                 {"ALDCOPY", copy}}) {
    e.parameters[name] = value;
  }
  return e;
}

TEST_CASE("chooser: aligned copies are decided at the shape served where they were not measured",
          "[select]") {
  const DeviceProfile h200 = load_profile(source_path("devices/sm_90.json"));
  // Measured without copies at an aligned shape, served large and unaligned in every dimension:
  // the copies cost little against the kernel there.
  const Database aligned_only = database({wide_entry({2048, 2048, 2048}, 40000, 0)});
  const Choice large = chosen(aligned_only, {4491, 3219, 2127}, &h200);
  CHECK(large.kind == ChoiceKind::kModel);
  CHECK(large.config.at("ALDCOPY") == 1);
  CHECK_THAT(large.reason, Catch::Contains("ALDCOPY=1") && Catch::Contains("2 operands"));
  // Aligned: nothing to copy, the entry's value stands with no note.
  const Choice aligned = chosen(aligned_only, {4096, 4096, 4096}, &h200);
  CHECK(aligned.config.at("ALDCOPY") == 0);
  CHECK_THAT(aligned.reason, !Catch::Contains("ALDCOPY"));
  // Measured with copies, served small and unaligned: they would cost more than they give.
  const Database with_copies = database({wide_entry({64, 64, 64}, 200, 1)});
  const Choice small = chosen(with_copies, {71, 45, 39}, &h200);
  CHECK(small.kind == ChoiceKind::kModel);
  CHECK(small.config.at("ALDCOPY") == 0);
  CHECK_THAT(small.reason, Catch::Contains("ALDCOPY=0"));
  // The shape's own entry runs as measured.
  const Choice exact = chosen(with_copies, {64, 64, 64}, &h200);
  CHECK(exact.exact);
  CHECK(exact.config.at("ALDCOPY") == 1);
  // Without the profile's bandwidth and peak there is no estimate: the value stays as it is.
  CHECK(chosen(with_copies, {71, 45, 39}, nullptr).config.at("ALDCOPY") == 1);
  // ... and so it does where the profile does not state the rule.
  DeviceProfile unstated = h200;
  unstated.selection.erase("aligned_copy");
  CHECK(chosen(with_copies, {71, 45, 39}, &unstated).config.at("ALDCOPY") == 1);
}

TEST_CASE("chooser: half-wide loads are set where K is even and no multiple of the wide loads",
          "[select]") {
  const DeviceProfile h200 = load_profile(source_path("devices/sm_90.json"));
  const Database db = database({wide_entry({2048, 2048, 2048}, 40000, 0)});
  // A mid-size shape, no copies there: K = 1298 is even, no multiple of 4, above the rule's 256.
  const Choice half = chosen(db, {1590, 223, 1298}, &h200);
  CHECK(half.config.at("ALDCOPY") == 0);
  CHECK(half.config.at("GLH") == 1);
  CHECK_THAT(half.reason, Catch::Contains("GLH=1") && Catch::Contains("K = 1298"));
  // K a multiple of 4, K odd, K below the rule's least: the entry's value stands, with no note.
  for (const int64_t k : {1296, 1299, 130}) {
    INFO(k);
    const Choice other = chosen(db, {1590, 223, k}, &h200);
    CHECK(other.config.at("GLH") == 0);
    CHECK_THAT(other.reason, !Catch::Contains("GLH"));
  }
  // Where the aligned copies run, the operands are aligned: no half-wide loads.
  const Choice copied = chosen(db, {4490, 3218, 2126}, &h200);
  CHECK(copied.config.at("ALDCOPY") == 1);
  CHECK(copied.config.at("GLH") == 0);
  // Producer rows are in the rule's `without`.
  DatabaseEntry producers = wide_entry({2048, 2048, 2048}, 40000, 0);
  for (const auto& [name, value] : Configuration{{"WSP", 8}, {"STAGES", 2}, {"PREFETCH", 0}}) {
    producers.parameters[name] = value;
  }
  const Choice with_producers = chosen(database({producers}), {1590, 223, 1298}, &h200);
  CHECK(with_producers.config.at("WSP") == 8);
  CHECK(with_producers.config.at("GLH") == 0);
  // The shape's own entry runs as measured, and a profile without the rule changes nothing.
  CHECK(chosen(database({wide_entry({1590, 223, 1298}, 9000, 0)}), {1590, 223, 1298}, &h200)
            .config.at("GLH") == 0);
  DeviceProfile unstated = h200;
  unstated.selection.erase("half_loads");
  CHECK(chosen(db, {1590, 223, 1298}, &unstated).config.at("GLH") == 0);
}

TEST_CASE("chooser: the split of K is weighed at the shape it serves, before the producer rows",
          "[select]") {
  const DeviceProfile h200 = load_profile(source_path("devices/sm_90.json"));
  DatabaseEntry split = multiplier_entry({2048, 256, 2048}, 30000);
  split.parameters["SPLITK"] = 8;
  const Database db = database({split});
  // 1590x223x1298 on the 64 units the chooser is told of: 100 tiles; 8 parts leave a partial
  // round of work-groups, which the rule weighs against the other splits.
  const Choice refit = chosen(db, {1590, 223, 1298}, &h200);
  CHECK(refit.config.at("SPLITK") != 8);
  CHECK_THAT(refit.reason, Catch::Contains("(measured with 8)") && Catch::Contains("100 tiles"));
  // The shape's own entry runs as measured, and a profile without the rule changes nothing.
  CHECK(chosen(database({split}), {2048, 256, 2048}, &h200).config.at("SPLITK") == 8);
  DeviceProfile unstated = h200;
  unstated.selection.erase("split_k");
  CHECK(chosen(db, {1590, 223, 1298}, &unstated).config.at("SPLITK") == 8);
  // Where the producer rows serve the pick as measured, its split stands.
  const Choice producers = chosen(db, {256, 256, 2048}, &h200);
  CHECK(producers.config.at("WSP") == 8);
  CHECK(producers.config.at("SPLITK") == 8);
  CHECK_THAT(producers.reason, !Catch::Contains("measured with 8"));
  // Without the producer rows the rule would weigh another split there.
  DeviceProfile no_producers = h200;
  no_producers.selection.erase("producer_rows");
  CHECK(chosen(db, {256, 256, 2048}, &no_producers).config.at("SPLITK") != 8);
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

TEST_CASE("chooser: within one source, this device's database decides before a sibling's",
          "[select]") {
  // A sibling device of the same profile (an H100's database on an H200): it applies, but the
  // device's own database, listed after it, decides first; across sources the order stays.
  DeviceProfile profile = load_profile(source_path("devices/sm_90.json"));
  DeviceInfo here = device();
  here.profile = profile.name;
  const Shape s{512, 512, 512};
  Database sibling = database({entry("xgemm_direct", s, 900)}, "Sibling GPU");
  sibling.device.profile = profile.name;
  Database own = database({entry("xgemm_fast", s, 800)});
  own.device.profile = profile.name;
  auto choose_here = [&](const std::vector<ChooserLayer>& layers) {
    return choose_configurations(
        layers, problem(s), here, &profile, [](const std::string& k) { return spec_of(k); },
        nullptr);
  };
  const Choices c = choose_here({{"compiled-in database", "sibling.json", &sibling, false},
                                 {"compiled-in database", "own.json", &own, false}});
  REQUIRE(c.choices.size() >= 2);
  CHECK(c.choices[0].origin == "own.json");
  CHECK(c.choices[0].spec->name() == "xgemm_fast");
  CHECK(c.choices[1].origin == "sibling.json");
  // A user's database comes first whatever device it names.
  const Choices u = choose_here({{"user database", "sibling.json", &sibling},
                                 {"compiled-in database", "own.json", &own, false}});
  REQUIRE(u.choices.size() >= 2);
  CHECK(u.choices[0].origin == "sibling.json");
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
  CHECK(c.choices[0].kind == ChoiceKind::kExact);
  CHECK(has_note(c, "passed over: stale (the template has no parameter NO_SUCH_PARAMETER)"));
  // Its note says it is one by its kind, which the library warns of.
  CHECK(std::any_of(c.notes.begin(), c.notes.end(),
                    [](const Note& n) { return n.kind == Note::Kind::kStale; }));
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
  CHECK(c.choices[0].kind == ChoiceKind::kDefaults);
  CHECK(c.choices[0].source == "compiled-in default");
  CHECK(c.choices[1].spec->name() == "xgemm_direct");
  CHECK(c.choices[1].kind == ChoiceKind::kFallback);
  CHECK(c.choices[1].config == *spec_of("xgemm_direct")->fallback());
  CHECK(has_note(c, "xgemm_fast"));
  CHECK(has_note(c, "the defaults of xgemm_fast passed over: refused here"));

  // Nothing at all: only the fallback templates' defaults in their order, then their declared
  // fallbacks (a single work-item), which fit the smallest limits a device may report.
  const Choices none = choose({}, problem(s));
  const std::vector<std::string>& defaults = SelectionPolicy::defaults().default_kernels;
  const size_t n = defaults.size();
  REQUIRE(none.choices.size() == n + 1);
  for (size_t i = 0; i < n; ++i) {
    CHECK(none.choices[i].spec->name() == defaults[i]);
    CHECK(none.choices[i].config == spec_of(defaults[i])->defaults());
  }
  const Choice& last = none.choices.back();
  CHECK(last.kind == ChoiceKind::kFallback);
  const Context ctx{{"ELEM_BYTES", 4}};
  CHECK(last.spec->work_group_size(last.config, ctx) == 1);
}

}  // namespace gemmtune_tests::src_select_test_chooser
