// SPDX-License-Identifier: Apache-2.0
// The kernel template declarations, source assembly and launch geometry (no device needed).
#include <catch2/catch.hpp>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <functional>
#include <map>
#include <regex>
#include <set>
#include <sstream>

#include "src/core/error.hpp"
#include "src/kernel/gemm_view.hpp"
#include "src/kernel/kernel_source.hpp"
#include "src/kernel/kernel_spec.hpp"
#include "tests/test_support.hpp"

// The file's own namespace: the test files compile in unity batches.
namespace gemmtune_tests::src_kernel_test_kernel_spec {

using namespace gemmtune;

namespace {
KernelSpec load_template(const std::string& name) {
  return KernelSpec::load(test::source_path("kernel_templates/" + name + ".json"));
}
const Context kFp32{{"ELEM_BYTES", 4}};
}  // namespace

TEST_CASE("xgemm and xgemm_direct declarations load with valid defaults", "[kernel_spec]") {
  for (const std::string name : {"xgemm", "xgemm_direct"}) {
    INFO(name);
    const KernelSpec spec = load_template(name);
    CHECK(spec.entry_point() == name);
    CHECK_FALSE(spec.check(spec.defaults(), DeviceLimits{}, kFp32).has_value());
    for (const auto& c : spec.constraints()) CHECK_FALSE(c.reason.empty());
    for (const std::string space : {"ci", "cpu", "gpu"}) REQUIRE(spec.spaces().count(space));
    const uint64_t ci = ParamSpace(spec, "ci", DeviceLimits{}, kFp32).count();
    const uint64_t cpu = ParamSpace(spec, "cpu", DeviceLimits{}, kFp32).count();
    const uint64_t gpu = ParamSpace(spec, "gpu", DeviceLimits{}, kFp32).count();
    CHECK(ci >= 12);
    CHECK(ci <= 100);
    CHECK(cpu > ci);
    CHECK(cpu <= 1000);
    CHECK(gpu > cpu);
  }
}

TEST_CASE("xgemm constraints name what is wrong and why", "[kernel_spec]") {
  const KernelSpec spec = load_template("xgemm");
  auto config = spec.defaults();
  config["KWI"] = 8;
  config["KWG"] = 8;  // KDIMA = 16 does not divide 8
  auto why = spec.check(config, DeviceLimits{}, kFp32);
  REQUIRE(why);
  CHECK_THAT(*why, Catch::Contains("KWG % ((MDIMC * NDIMC) / MDIMA) == 0"));
  CHECK_THAT(*why, Catch::Contains("KDIMA"));
  config = spec.defaults();
  config["MWG"] = 16;  // 16 % (MDIMC * VWM) = 16 % 32
  why = spec.check(config, DeviceLimits{}, kFp32);
  REQUIRE(why);
  CHECK_THAT(*why, Catch::Contains("MWG % (MDIMC * VWM) == 0"));
  config = spec.defaults();
  config["SA"] = 0;  // PADA=1 without staging duplicates PADA=0
  why = spec.check(config, DeviceLimits{}, kFp32);
  REQUIRE(why);
  CHECK_THAT(*why, Catch::Contains("SA == 1 || PADA == 0"));
}

TEST_CASE("resource formulas follow the parameters", "[kernel_spec]") {
  const KernelSpec xgemm = load_template("xgemm");
  auto c = xgemm.defaults();  // MWG=NWG=64, KWG=32, PADA=PADB=1
  CHECK(*xgemm.local_mem_bytes(c, kFp32) == 4 * (32 * 65 + 32 * 65));
  CHECK(*xgemm.local_mem_bytes(c, Context{{"ELEM_BYTES", 8}}) == 8 * (32 * 65 + 32 * 65));
  c["SB"] = 0;
  c["PADB"] = 0;
  CHECK(*xgemm.local_mem_bytes(c, kFp32) == 4 * 32 * 65);
  CHECK(*xgemm.work_group_size(c, kFp32) == 256);
  CHECK(*xgemm.registers(c, kFp32) == 4 * 4 + 4 + 4 + 12);
  const KernelSpec direct = load_template("xgemm_direct");
  const auto d = direct.defaults();  // WGD=32, PADA=PADB=1
  CHECK(*direct.local_mem_bytes(d, kFp32) == 4 * 32 * (33 + 33));
  // Aliases for tools that read tile sizes generically.
  CHECK(*direct.value_of("MWG", d, kFp32) == 32);
  CHECK(*direct.value_of("NWI", d, kFp32) == 4);
}

TEST_CASE("row-major problems map onto the column-major contract by swapping", "[kernel_spec]") {
  Problem p;
  p.shape = Shape{10, 20, 30};
  p.order = Order::kRowMajor;
  set_layout(p, "TN");
  KernelView v = kernel_view(p);
  CHECK(v.swap_ab);
  CHECK(v.m == 20);
  CHECK(v.n == 10);
  CHECK(v.k == 30);
  CHECK_FALSE(v.trans_a);  // the kernel's A is the problem's B, not transposed
  CHECK(v.trans_b);
  CHECK(v.a_rows() == 20);  // row-major B (30 x 20) is column-major 20 x 30
  CHECK(v.b_rows() == 10);  // row-major A^T storage (30 x 10) is column-major 10 x 30
  p.order = Order::kColMajor;
  v = kernel_view(p);
  CHECK_FALSE(v.swap_ab);
  CHECK(v.m == 10);
  CHECK(v.trans_a);
  CHECK(v.a_rows() == 30);
  CHECK(v.b_rows() == 30);
}

TEST_CASE("launch geometry comes from the declaration, padded when declared", "[kernel_spec]") {
  Problem p;
  p.shape = Shape{100, 70, 33};
  p.order = Order::kColMajor;
  const KernelView v = kernel_view(p);
  const KernelSpec xgemm = load_template("xgemm");
  auto g = launch_geometry(xgemm, xgemm.defaults(), kFp32, v);
  CHECK(g.padded);
  CHECK(g.m == 128);
  CHECK(g.n == 128);
  CHECK(g.k == 64);
  CHECK(g.local == std::vector<size_t>{16, 16});
  CHECK(g.global == std::vector<size_t>{32, 32});
  const KernelSpec direct = load_template("xgemm_direct");
  g = launch_geometry(direct, direct.defaults(), kFp32, v);
  CHECK_FALSE(g.padded);
  CHECK(g.m == 100);
  CHECK(g.global == std::vector<size_t>{4 * 8, 3 * 8});

  nlohmann::json j = xgemm.raw();
  j["launch"]["global"] = {"M / MWG * MDIMC + 1", "N"};
  const KernelSpec broken = KernelSpec::from_json(j, "broken.json");
  REQUIRE_THROWS_WITH(launch_geometry(broken, broken.defaults(), kFp32, v),
                      Catch::Contains("not a multiple of the local size"));
  // A launch without local sizes is refused when the declaration is read.
  j["launch"].erase("local");
  REQUIRE_THROWS_WITH(KernelSpec::from_json(j, "broken.json"),
                      Catch::Contains("broken.json") && Catch::Contains("'launch.local'"));
}

TEST_CASE("split-K adds its parts in the main kernel where in_kernel says so", "[kernel_spec]") {
  KernelView v;
  v.m = 100;
  v.n = 70;
  v.k = 300;
  for (const std::string name : {"xgemm_fast", "xgemm_skinny"}) {
    const KernelSpec spec = load_template(name);
    INFO(name);
    // Without a split there are no parts to add: the in-kernel form is refused.
    CHECK_THAT(spec.check(spec.complete({{"KREDUCE", 1}}), DeviceLimits{}, kFp32).value_or(""),
               Catch::Contains("without a split"));
    Configuration two = spec.complete({{"SPLITK", 3}});
    Configuration one = two;
    one["KREDUCE"] = 1;
    CHECK_FALSE(spec.check(one, DeviceLimits{}, kFp32));
    auto g = launch_geometry(spec, two, kFp32, v);
    REQUIRE(g.split_k);
    CHECK(g.split_k->reduce_launch());
    CHECK_FALSE(g.split_k->in_kernel);
    g = launch_geometry(spec, one, kFp32, v);
    REQUIRE(g.split_k);
    CHECK_FALSE(g.split_k->reduce_launch());
    CHECK(g.split_k->in_kernel);
    CHECK(g.split_k->workspace_elements == 3 * 100 * 70);
  }
  // One counter per output tile: 2 x 2 tiles of 64 x 64 (xgemm_fast), 70 / 64 -> 2 blocks of
  // columns (xgemm_skinny, SIDE 0).
  const KernelSpec fast = load_template("xgemm_fast");
  CHECK(launch_geometry(fast, fast.complete({{"SPLITK", 2}, {"KREDUCE", 1}}), kFp32, v)
            .split_k->counters == 4);
  const KernelSpec skinny = load_template("xgemm_skinny");
  CHECK(launch_geometry(skinny, skinny.complete({{"SPLITK", 2}, {"KREDUCE", 1}}), kFp32, v)
            .split_k->counters == 2);
}

TEST_CASE("xgemm_fast's tail split sizes its grid by the device's compute units", "[kernel_spec]") {
  const KernelSpec fast = load_template("xgemm_fast");
  KernelView v;
  v.m = 1000;
  v.n = 700;
  v.k = 300;
  // 16 x 11 tiles of 64: the first 176 - 176 % (TAIL x units) take all of K, the rest 4 parts.
  const Configuration tail = fast.complete({{"SPLITK", 4}, {"KREDUCE", 1}, {"TAIL", 1}});
  const int64_t tile = 64 * 64;
  auto g = launch_geometry(fast, tail, launch_context(Precision::kFP32, 50), v);
  CHECK(g.global == std::vector<size_t>{(176 + 26 * 3) * 16, 16, 1});
  REQUIRE(g.split_k);
  CHECK(g.split_k->in_kernel);
  CHECK(g.split_k->workspace_elements == 4 * 26 * tile);
  CHECK(g.split_k->counters == 176);
  Configuration two_rounds = tail;
  two_rounds["TAIL"] = 2;
  g = launch_geometry(fast, two_rounds, launch_context(Precision::kFP32, 50), v);
  CHECK(g.global[0] == (176 + 76 * 3) * 16);
  CHECK(g.split_k->workspace_elements == 4 * 76 * tile);
  // Whole rounds: no tile is split, and the workspace is a placeholder element.
  g = launch_geometry(fast, tail, launch_context(Precision::kFP32, 44), v);
  CHECK(g.global[0] == 176 * 16);
  CHECK(g.split_k->workspace_elements == 1);
  // Without the device's compute units the grid cannot be sized.
  CHECK_FALSE(try_launch_geometry(fast, tail, kFp32, v));
  CHECK(try_launch_geometry(fast, fast.complete({{"SPLITK", 4}}), kFp32, v));
  // The tail split adds its parts in the kernel.
  Configuration reduce_kernel = tail;
  reduce_kernel["KREDUCE"] = 0;
  CHECK_THAT(fast.check(reduce_kernel, DeviceLimits{}, kFp32).value_or(""),
             Catch::Contains("tail split"));
}

TEST_CASE("xgemm_fast's reduce kernel runs 64 x 4 work-groups where M passes 32", "[kernel_spec]") {
  const KernelSpec fast = load_template("xgemm_fast");
  const Configuration split = fast.complete({{"SPLITK", 4}});
  KernelView v;
  v.n = 70;
  v.k = 300;
  v.m = 100;
  auto g = launch_geometry(fast, split, kFp32, v);
  REQUIRE(g.split_k);
  CHECK(g.split_k->reduce_local == std::vector<size_t>{64, 4});
  CHECK(g.split_k->reduce_global == std::vector<size_t>{128, 72});
  v.m = 32;  // narrower than the wide groups: the square ones waste fewer work-items
  g = launch_geometry(fast, split, kFp32, v);
  REQUIRE(g.split_k);
  CHECK(g.split_k->reduce_local == std::vector<size_t>{16, 16});
  CHECK(g.split_k->reduce_global == std::vector<size_t>{32, 80});
}

TEST_CASE("a device that refuses split-K in one launch keeps every other form", "[kernel_spec]") {
  DeviceLimits limits;
  limits.in_kernel_reduction_refused = "needs device-scope fences";
  for (const std::string name : {"xgemm_fast", "xgemm_skinny"}) {
    const KernelSpec spec = load_template(name);
    INFO(name);
    Configuration two = spec.complete({{"SPLITK", 3}});
    Configuration one = two;
    one["KREDUCE"] = 1;
    CHECK(spec.check(one, limits, kFp32).value_or("") ==
          "split-K in one launch (KREDUCE) needs device-scope fences");
    CHECK_FALSE(spec.check(two, limits, kFp32));
    CHECK_FALSE(spec.check(spec.complete({}), limits, kFp32));
    // The search's spaces lose exactly their one-launch configurations.
    const ParamSpace all(spec, "ci", DeviceLimits{}, kFp32), kept(spec, "ci", limits, kFp32);
    CHECK(kept.count() < all.count());
    CHECK(kept.count() > 0);
  }
}

TEST_CASE("a declaration with an unknown field or a wrong type is refused naming file and field",
          "[kernel_spec]") {
  const nlohmann::json good = load_template("xgemm_fast").raw();
  auto refused = [&](const std::function<void(nlohmann::json&)>& edit, const std::string& field) {
    nlohmann::json j = good;
    edit(j);
    INFO(field);
    CHECK_THROWS_WITH(KernelSpec::from_json(j, "t.json"),
                      Catch::StartsWith("t.json: ") && Catch::Contains("'" + field + "'"));
  };
  refused([](auto& j) { j["lanuch"] = nlohmann::json::object(); }, "lanuch");
  refused([](auto& j) { j["description"] = 3; }, "description");
  refused([](auto& j) { j["backend"] = "cuda"; }, "backend");
  refused([](auto& j) { j["parameters"][0]["defualt"] = 1; }, "parameters[0].defualt");
  refused([](auto& j) { j["parameters"][1]["help"] = nlohmann::json::array(); },
          "parameters[1].help");
  refused([](auto& j) { j["constraints"][0]["why"] = "x"; }, "constraints[0].why");
  refused([](auto& j) { j["constraints"][0]["expr"] = "MWG % NOPE == 0"; }, "constraints[0].expr");
  refused([](auto& j) { j["launch"]["split_k"]["reduce"] = "x"; }, "launch.split_k.reduce");
  refused([](auto& j) { j["launch"]["split_k"]["reduce_entry"] = 1; },
          "launch.split_k.reduce_entry");
  // An in-kernel reduction needs its counters, and counters mean nothing without one.
  refused([](auto& j) { j["launch"]["split_k"].erase("counters"); }, "launch.split_k.counters");
  refused([](auto& j) { j["launch"]["split_k"].erase("in_kernel"); }, "launch.split_k.in_kernel");
  refused([](auto& j) { j["launch"]["split_k"]["in_kernel"] = "KREDUCE + NOPE"; },
          "launch.split_k.in_kernel");
  refused(
      [](auto& j) {
        j["launch"]["batch"]["layouts"] = {"strided", "ptr"};
      },
      "launch.batch.layouts");
  refused([](auto& j) { j["launch"]["local"] = {"MDIMC", 2.5}; }, "launch.local[1]");
  refused([](auto& j) { j["launch"]["global"][0] = "ceil_div(M, MWG) * P"; }, "launch.global");
  refused([](auto& j) { j["epilogue"] = {"bias", "tanh"}; }, "epilogue");
  refused([](auto& j) { j["spaces"]["ci"]["bsae"] = "full"; }, "spaces.ci.bsae");
  refused([](auto& j) { j["spaces"]["ci"]["base"] = "all"; }, "spaces.ci.base");
  refused([](auto& j) { j["clblast_kernel"] = "Xgemm"; }, "clblast_kernel");
  refused([](auto& j) { j.erase("launch"); }, "launch");

  // The typed fields read back as declared.
  const KernelSpec spec = KernelSpec::from_json(good, "t.json");
  CHECK(spec.backend() == Backend::kOpenCl);
  CHECK(spec.epilogue() == std::vector<std::string>{"bias", "relu", "gelu"});
  REQUIRE(spec.launch().split_k);
  CHECK(spec.launch().split_k->parameter == "SPLITK");
  CHECK(spec.launch().batch_layouts ==
        std::vector<BatchLayout>{BatchLayout::kStrided, BatchLayout::kOffsets});
  const KernelSpec blas = load_template("clblast-xgemm");
  CHECK(blas.backend() == Backend::kClblast);
  CHECK(blas.clblast_kernel() == "Xgemm");
}

TEST_CASE("max work-item sizes prune configurations with their reason", "[kernel_spec]") {
  const KernelSpec spec = load_template("xgemm");
  DeviceLimits limits;
  limits.max_work_item_sizes = {8, 1024, 1024};  // at most 8 work-items along dimension 0
  Configuration config = spec.defaults();
  const auto why = spec.check(config, limits, kFp32);
  REQUIRE(why);
  CHECK_THAT(*why, Catch::Contains("local size 16 in dimension 0") &&
                       Catch::Contains("max work-item size 8"));
  const ParamSpace space(spec, "ci", limits, kFp32);
  const ParamSpace unlimited(spec, "ci", DeviceLimits{}, kFp32);
  uint64_t narrow = 0;
  unlimited.for_each([&](const Configuration& c) {
    if (c.at("MDIMC") <= 8) ++narrow;
    return true;
  });
  CHECK(space.count() == narrow);
  CHECK(space.count() < unlimited.count());
  space.for_each([&](const Configuration& c) {
    CHECK(c.at("MDIMC") <= 8);
    return true;
  });
}

TEST_CASE("kernel sources expand includes once and options list every define", "[kernel_spec]") {
  const std::string src = load_kernel_source(test::source_path("kernel_templates"), "xgemm.cl");
  CHECK(src.find("#include") == std::string::npos);
  CHECK(src.find("typedef float real;") != std::string::npos);
  CHECK(src.find("void GEMM_ENTRY(") != std::string::npos);
  // common.cl is included by xgemm.cl only: its typedefs appear once.
  CHECK(src.find("typedef float real;") == src.rfind("typedef float real;"));

  const std::string dir = test::temp_dir("ksrc");
  std::ofstream(dir + "/a.cl") << "#include \"missing.cl\"\n";
  REQUIRE_THROWS_WITH(load_kernel_source(dir, "a.cl"), Catch::Contains("missing.cl"));
  REQUIRE_THROWS_WITH(load_kernel_source(dir, "nope.cl"), Catch::Contains("not found"));

  const std::string opts =
      build_options({{"NWG", 32}, {"MWG", 64}}, Precision::kFP64, true, false, "-cl-mad-enable");
  CHECK(opts == "-DMWG=64 -DNWG=32 -DPRECISION=64 -DTRANSA=1 -DTRANSB=0 -cl-mad-enable");
}

TEST_CASE("build logs are trimmed for messages", "[kernel_spec]") {
  std::string log;
  for (int i = 0; i < 50; ++i) log += "line " + std::to_string(i) + "\n\n";
  const std::string t = trim_build_log(log, 5, 1000);
  CHECK_THAT(t, Catch::StartsWith("line 0\nline 1\n"));
  CHECK_THAT(t, Catch::Contains("45 more lines"));
  CHECK(trim_build_log("  \n\nerror: x\n") == "error: x");
}

TEST_CASE("a parameter missing from a configuration takes its default in expressions",
          "[kernel_spec]") {
  // Recordings made before a parameter existed lack it; they ran with its default.
  const KernelSpec spec = load_template("xgemm_fast");
  Configuration recorded = spec.defaults();
  recorded.erase("DOT2");
  const Context ctx{{"ELEM_BYTES", 4}};
  CHECK(spec.value_of("DOT2", recorded, ctx) == 0);
  CHECK(spec.registers(recorded, ctx) == spec.registers(spec.defaults(), ctx));
  CHECK_THROWS_WITH(spec.value_of("NOPE", recorded, ctx), Catch::Contains("unknown name 'NOPE'"));
}

TEST_CASE("a space too large to enumerate is refused naming the named spaces", "[kernel_spec]") {
  const KernelSpec spec = load_template("xgemm_fast");
  const ParamSpace full(spec, "full", DeviceLimits{}, kFp32);
  REQUIRE(full.cartesian_size() > kMaxEnumeratedCombinations);
  CHECK_THROWS_WITH(full.count(), Catch::Contains("space 'full' of kernel xgemm_fast") &&
                                      Catch::Contains("gpu, large"));
  // The default GPU space is a declared one that enumerates.
  const ParamSpace gpu(spec, "gpu", DeviceLimits{}, kFp32);
  CHECK(gpu.cartesian_size() <= kMaxEnumeratedCombinations);
  CHECK(gpu.count() > ParamSpace(spec, "large", DeviceLimits{}, kFp32).count() / 10);
}

namespace {

// The defaults a template's source gives its macros: `#ifndef NAME` directly followed by
// `#define NAME value` (the value up to a comment), name -> value text.
std::map<std::string, std::string> source_defaults(const std::string& source) {
  static const std::regex ifndef(R"(^\s*#\s*ifndef\s+(\w+)\s*$)");
  static const std::regex define(R"(^\s*#\s*define\s+(\w+)\s+([^/\s]+)\s*(//.*)?$)");
  std::map<std::string, std::string> out;
  std::istringstream in(source);
  std::string line, guarded;
  while (std::getline(in, line)) {
    std::smatch m;
    if (!guarded.empty() && std::regex_match(line, m, define) && m[1] == guarded) {
      out[guarded] = m[2];
    }
    guarded = std::regex_match(line, m, ifndef) ? m[1].str() : "";
  }
  return out;
}

// Every name the launch block and the register cap read: the host's own parameters.
std::set<std::string> host_names(const KernelSpec& spec) {
  std::set<std::string> names;
  auto add = [&](const Expression& e) {
    names.insert(e.identifiers().begin(), e.identifiers().end());
  };
  const LaunchDeclaration& l = spec.launch();
  for (const auto& e : l.local) add(e);
  for (const auto& e : l.global) add(e);
  for (const Expression* e : {&l.pad_m, &l.pad_n, &l.pad_k, &l.align_ld}) add(*e);
  if (l.split_k) {
    names.insert(l.split_k->parameter);
    add(l.split_k->workspace_elements);
  }
  if (!spec.register_cap_parameter().empty()) names.insert(spec.register_cap_parameter());
  return names;
}

std::vector<std::string> template_names() {
  std::vector<std::string> names;
  for (const auto& e : std::filesystem::directory_iterator(test::source_path("kernel_templates"))) {
    if (e.path().extension() == ".json") names.push_back(e.path().stem().string());
  }
  std::sort(names.begin(), names.end());
  return names;
}

}  // namespace

TEST_CASE("the default reader finds guarded defines and nothing else", "[kernel_spec][roles]") {
  const auto d = source_defaults(
      "#ifndef MWG\n#define MWG 64  // tile\n#endif\n#define NWG 32\n#ifndef KWG\n#endif\n"
      "#define KWG 8\n  #  ifndef VWM\n  #define VWM 4\n#endif\n");
  CHECK(d == std::map<std::string, std::string>{{"MWG", "64"}, {"VWM", "4"}});
}

TEST_CASE("every template's json defaults equal the defaults of its source",
          "[kernel_spec][roles]") {
  const std::string dir = test::source_path("kernel_templates");
  size_t sources = 0;
  for (const auto& name : template_names()) {
    const KernelSpec spec = load_template(name);
    if (spec.backend() != Backend::kOpenCl) continue;  // CLBlast compiles its own source
    INFO(name);
    ++sources;
    const std::string source = load_kernel_source(dir, spec.source_file());
    const auto defaults = source_defaults(source);
    const std::set<std::string> host = host_names(spec);
    for (const auto& p : spec.parameters()) {
      INFO(p.name);
      if (p.runtime) {
        // A kernel argument: a define of the same name would be a second, stale value.
        CHECK_FALSE(defaults.count(p.name));
        continue;
      }
      if (!std::regex_search(source, std::regex("\\b" + p.name + "\\b"))) {
        // A parameter the kernel never reads must be the host's (a launch or build setting).
        CHECK(host.count(p.name));
        continue;
      }
      REQUIRE(defaults.count(p.name));
      CHECK(defaults.at(p.name) == std::to_string(p.default_value));
    }
  }
  CHECK(sources >= 4);  // xgemm, xgemm_direct, xgemm_fast, xgemm_skinny
}

TEST_CASE("every template declares roles that resolve for its defaults", "[kernel_spec][roles]") {
  const auto names = template_names();
  CHECK(names.size() >= 6);
  for (const auto& name : names) {
    INFO(name);
    const KernelSpec spec = load_template(name);
    // Every template has a work-group tile in N (xgemm_skinny's columns per work-group) and an
    // unroll of K; the tiled ones declare their whole geometry.
    CHECK(spec.declares(Role::kTileN));
    CHECK(spec.declares(Role::kUnrollK));
    if (spec.declares(Role::kTileM)) {
      for (Role r : {Role::kTileK, Role::kThreadsM, Role::kThreadsN, Role::kRegisterTileM,
                     Role::kRegisterTileN, Role::kVectorM, Role::kVectorN}) {
        INFO(role_name(r));
        CHECK(spec.declares(r));
      }
    }
    for (const int64_t elem : {2, 4, 8}) {
      const Context ctx{{"ELEM_BYTES", elem}};
      for (Role r : all_roles()) {
        INFO(role_name(r));
        const auto v = spec.role(r, spec.defaults(), ctx);
        CHECK(v.has_value() == spec.declares(r));
        if (v && is_size_role(r)) CHECK(*v > 0);
      }
    }
  }
  // What the roles say of xgemm_direct: its square tile WGD is the tile in M, N and K.
  const KernelSpec direct = load_template("xgemm_direct");
  Configuration c = direct.defaults();
  c["WGD"] = 16;
  for (Role r : {Role::kTileM, Role::kTileN, Role::kTileK}) CHECK(direct.role(r, c, kFp32) == 16);
  CHECK(direct.role(Role::kRegisterTileM, c, kFp32) == 16 / c.at("MDIMCD"));
  // xgemm_fast's split factor is its launch block's.
  const KernelSpec fast = load_template("xgemm_fast");
  CHECK(fast.role(Role::kSplitK, fast.complete({{"SPLITK", 4}}), kFp32) == 4);
}

TEST_CASE("role declarations are refused naming file and field", "[kernel_spec][roles]") {
  const nlohmann::json good = load_template("xgemm").raw();
  auto refused = [&](const nlohmann::json& roles, const std::string& field,
                     const std::string& what) {
    nlohmann::json j = good;
    j["roles"] = roles;
    INFO(roles.dump());
    CHECK_THROWS_WITH(KernelSpec::from_json(j, "t.json"), Catch::StartsWith("t.json: ") &&
                                                              Catch::Contains("'" + field + "'") &&
                                                              Catch::Contains(what));
  };
  refused({{"tile_x", "MWG"}}, "roles.tile_x", "not a known role");
  refused({{"tile_m", "WGD"}}, "roles.tile_m", "unknown name 'WGD'");
  refused({{"tile_m", 64}}, "roles.tile_m", "must be an expression string");
  refused({{"tile_m", "MWG +"}}, "roles.tile_m", "");
  refused({{"tile_m", "MWG - 64"}}, "roles.tile_m", "must be positive");
  refused("MWG", "roles", "must be an object");
  nlohmann::json fast = load_template("xgemm_fast").raw();
  fast["roles"]["split_k"] = "KWI";
  CHECK_THROWS_WITH(KernelSpec::from_json(fast, "f.json"),
                    Catch::StartsWith("f.json: ") && Catch::Contains("'roles.split_k'") &&
                        Catch::Contains("launch.split_k.parameter is 'SPLITK'"));
  // Expressions and derived values are roles too; an undeclared role is unknown.
  nlohmann::json j = good;
  j["roles"] = {{"tile_m", "MWG / 2"}, {"register_tile_m", "MWI"}};
  const KernelSpec spec = KernelSpec::from_json(j, "t.json");
  CHECK(spec.role(Role::kTileM, spec.defaults(), kFp32) == 32);
  CHECK(spec.role(Role::kRegisterTileM, spec.defaults(), kFp32) == 4);
  CHECK_FALSE(spec.role(Role::kTileN, spec.defaults(), kFp32));
  CHECK_FALSE(spec.declares(Role::kTileN));
}

TEST_CASE("without a declaration roles are read by the conventional names",
          "[kernel_spec][roles]") {
  const Configuration direct = {{"WGD", 32}, {"MDIMCD", 8}, {"VWMD", 2}};
  CHECK(conventional_role(Role::kTileM, direct) == 32);
  CHECK(conventional_role(Role::kTileK, direct) == 32);
  CHECK(conventional_role(Role::kThreadsM, direct) == 8);
  CHECK(conventional_role(Role::kVectorM, direct) == 2);
  CHECK_FALSE(conventional_role(Role::kSplitK, direct));
  const RoleValues undeclared(nullptr, direct, kFp32);
  CHECK_FALSE(undeclared.declared());
  CHECK(undeclared.get(Role::kTileN) == 32);
  // With the declaration, the declaration alone counts: xgemm_skinny declares no tile in M.
  const KernelSpec skinny = load_template("xgemm_skinny");
  const Configuration s = skinny.defaults();
  const RoleValues declared(&skinny, s, kFp32);
  CHECK(declared.declared());
  CHECK_FALSE(declared.get(Role::kTileM));
  CHECK(declared.get(Role::kTileN) == s.at("WGJ") * s.at("NWI"));
  for (Role r : all_roles()) CHECK(parse_role(role_name(r)) == r);
  CHECK_FALSE(parse_role("MWG"));
}

}  // namespace gemmtune_tests::src_kernel_test_kernel_spec
