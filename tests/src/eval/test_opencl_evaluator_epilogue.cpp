// SPDX-License-Identifier: Apache-2.0
// The fused epilogue C = act(alpha·op(A)·op(B) + beta·C + bias): parsing, the reference, the
// OpenCL evaluator with xgemm_fast on every order and layout, and the database key (the commands'
// --epilogue: tests/tools).
#include <catch2/catch.hpp>

#include <nlohmann/json.hpp>

#include "src/core/error.hpp"
#include "src/db/database.hpp"
#include "src/device/device.hpp"
#include "src/device/device_profile.hpp"
#include "src/eval/opencl_evaluator.hpp"
#include "src/verify/reference.hpp"
#include "tests/test_support.hpp"

// The file's own namespace: the test files compile in unity batches.
namespace gemmtune_tests::src_eval_test_opencl_evaluator_epilogue {

using namespace gemmtune;

using test::describe;

namespace {

constexpr uint64_t kSeed = 42;
// A small xgemm_fast configuration from its "ci" space (16x16 tiles, 32 threads), the other
// parameters at their defaults; split-K's parts added by the reduce kernel or, `in_kernel`, by the
// main kernel.
Configuration fast_config(int64_t split_k = 1, bool in_kernel = false) {
  const KernelSpec spec = KernelSpec::load(test::source_path("kernel_templates/xgemm_fast.json"));
  return spec.complete({{"MWG", 16},
                        {"NWG", 16},
                        {"KWG", 8},
                        {"MDIMC", 4},
                        {"NDIMC", 8},
                        {"VWM", 2},
                        {"VWN", 1},
                        {"SPLITK", split_k},
                        {"KREDUCE", in_kernel ? 1 : 0}});
}

const test::TestDevice& bench() {
  return test::test_device();
}

// `extra_build_options` lets a test build the kernel with an epilogue other than the problem's.
std::unique_ptr<test::TemplateEvaluators> make_evaluator(
    const std::string& extra_build_options = "") {
  auto& b = bench();
  if (!b.device) return nullptr;
  test::EvaluatorSettings o = test::quick_evaluator_options();
  o.cache_dir = b.cache_dir;
  o.data_seed = kSeed;
  DeviceProfile profile;
  if (const DeviceProfile* found = b.profiles.find(b.device->info.profile)) profile = *found;
  if (!extra_build_options.empty()) {
    profile.build_options += (profile.build_options.empty() ? "" : " ") + extra_build_options;
  }
  return test::make_test_evaluator(o, &profile);
}

test::KernelCase fast_problem(Shape shape, Order order, const std::string& layout,
                              const std::string& epilogue) {
  test::KernelCase p = test::problem_of("xgemm_fast", shape, order, layout);
  p.epilogue = parse_epilogue(epilogue);
  return p;
}

// C as the problem stores it, from a reference's expected values.
std::vector<double> stored(const Problem& p, const Reference& ref) {
  const auto& s = p.shape;
  std::vector<double> c(static_cast<size_t>(s.m * s.n));
  for (int64_t i = 0; i < s.m; ++i) {
    for (int64_t j = 0; j < s.n; ++j) {
      c[static_cast<size_t>(stored_index(p.order, s.m, s.n, i, j))] = ref.expected()(i, j);
    }
  }
  return c;
}

}  // namespace

TEST_CASE("epilogue specs parse in any order to a canonical form", "[epilogue]") {
  CHECK(parse_epilogue("").none());
  CHECK(parse_epilogue("  ").none());
  CHECK(to_string(parse_epilogue("")) == "");
  CHECK(to_string(parse_epilogue("bias")) == "bias");
  CHECK(to_string(parse_epilogue("relu")) == "relu");
  CHECK(to_string(parse_epilogue("gelu")) == "gelu");
  CHECK(to_string(parse_epilogue("bias,relu")) == "bias,relu");
  CHECK(to_string(parse_epilogue("relu,bias")) == "bias,relu");
  CHECK(to_string(parse_epilogue(" GELU , bias ")) == "bias,gelu");
  const Epilogue e = parse_epilogue("gelu,bias");
  CHECK(e.bias);
  CHECK(e.activation == Activation::kGelu);
}

TEST_CASE("bad epilogue specs are refused naming the bad item", "[epilogue]") {
  auto message = [](const std::string& spec) {
    try {
      parse_epilogue(spec);
    } catch (const Error& e) {
      CHECK(e.code() == ErrorCode::kInvalidArgument);
      return std::string(e.what());
    }
    return std::string("accepted");
  };
  CHECK_THAT(message("bias,swish"), Catch::Contains("'swish'"));
  CHECK_THAT(message("relu,gelu"), Catch::Contains("two activations"));
  CHECK_THAT(message("bias,bias"), Catch::Contains("'bias' twice"));
  CHECK_THAT(message("bias,"), Catch::Contains("empty item"));
  CHECK_THAT(message(",relu"), Catch::Contains("empty item"));
}

TEST_CASE("the reference applies bias and activation, and a wrong epilogue fails it",
          "[epilogue]") {
  const test::KernelCase gelu = fast_problem({17, 9, 5}, Order::kRowMajor, "NN", "bias,gelu");
  const HostMatrices inputs = make_inputs(gelu, kSeed);
  REQUIRE(inputs.bias.size() == 9);
  const Reference ref(gelu, inputs);
  CHECK(ref.check(stored(gelu, ref)).ok);

  // The same inputs with ReLU instead of GELU, or without the bias, give results it refuses.
  test::KernelCase relu = gelu;
  relu.epilogue = parse_epilogue("bias,relu");
  const Verification wrong_activation = ref.check(stored(relu, Reference(relu, inputs)));
  CHECK_FALSE(wrong_activation.ok);
  test::KernelCase no_bias = gelu;
  no_bias.epilogue = parse_epilogue("gelu");
  const Verification missing_bias = ref.check(stored(no_bias, Reference(no_bias, inputs)));
  CHECK_FALSE(missing_bias.ok);
  CHECK_THAT(missing_bias.message, Catch::Contains("+|bias|"));

  // The bias puts outputs on both sides of zero, so both branches of the ReLU are checked.
  const Reference relu_ref(relu, inputs);
  const auto c = relu_ref.expected();
  CHECK((c.array() == 0.0).count() > 0);
  CHECK((c.array() > 0.0).count() > 0);
}

TEST_CASE("xgemm_fast applies the epilogue in both orders and every layout", "[epilogue][device]") {
  auto ev = make_evaluator();
  if (!ev) return test::unavailable("no OpenCL device");
  // The epilogue acts where C is stored, which the storage order decides: every epilogue in both
  // orders, the layouts of A and B in turn (each combination is another kernel build).
  const std::vector<std::string> layouts = {"NN", "NT", "TN", "TT"};
  size_t turn = 0;
  for (const std::string epilogue : {"bias,relu", "bias,gelu", "relu"}) {
    for (Order order : {Order::kRowMajor, Order::kColMajor}) {
      const std::string& layout = layouts[turn++ % layouts.size()];
      for (Shape shape : {Shape{33, 17, 65}, Shape{1, 1, 1}, Shape{65, 3, 7}}) {
        const test::KernelCase p = fast_problem(shape, order, layout, epilogue);
        const Result r = ev->evaluate(p, fast_config());
        INFO(describe(p, r));
        CHECK(r.status == Status::kOk);
      }
    }
  }
}

TEST_CASE("xgemm_fast's epilogue with beta, split-K in two launches or one, and a batch",
          "[epilogue][device]") {
  auto ev = make_evaluator();
  if (!ev) return test::unavailable("no OpenCL device");
  test::KernelCase with_beta = fast_problem({33, 17, 65}, Order::kRowMajor, "NT", "bias,gelu");
  with_beta.alpha = 1.5;
  with_beta.beta = -0.75;
  const Configuration plain = fast_config(), split = fast_config(2),
                      one_launch = fast_config(3, true);
  const test::KernelCase split_k = fast_problem({33, 17, 65}, Order::kColMajor, "TN", "bias,relu");
  test::KernelCase batched = fast_problem({33, 17, 9}, Order::kRowMajor, "NN", "bias,gelu");
  batched.batch = 3;
  test::KernelCase split_beta = fast_problem({65, 3, 7}, Order::kRowMajor, "TT", "bias,gelu");
  split_beta.beta = 2.0;
  for (const auto& [p, config] :
       std::vector<std::pair<test::KernelCase, Configuration>>{{with_beta, plain},
                                                               {split_k, split},
                                                               {batched, plain},
                                                               {split_beta, split},
                                                               {split_k, one_launch},
                                                               {split_beta, one_launch}}) {
    const Result r = ev->evaluate(p, config);
    INFO(describe(p, r));
    CHECK(r.status == Status::kOk);
  }
}

TEST_CASE("a kernel built with another epilogue than the problem's fails verification",
          "[epilogue][device]") {
  const test::KernelCase p = fast_problem({17, 9, 5}, Order::kRowMajor, "NN", "bias,gelu");
  // The profile's options come after the epilogue's defines and override them.
  for (const std::string override : {"-DACTIVATION=1", "-DBIAS=0"}) {
    auto ev = make_evaluator(override);
    if (!ev) return test::unavailable("no OpenCL device");
    const Result r = ev->evaluate(p, fast_config());
    INFO(override << ": " << describe(p, r));
    CHECK(r.status == Status::kWrongResult);
  }
}

TEST_CASE("a kernel without epilogue support reports it unsupported", "[epilogue][device]") {
  auto ev = make_evaluator();
  if (!ev) return test::unavailable("no OpenCL device");
  test::KernelCase p = fast_problem({8, 8, 8}, Order::kRowMajor, "NN", "bias,relu");
  p.kernel = "xgemm";
  const Result r = ev->evaluate(p, ev->spec("xgemm").defaults());
  CHECK(r.status == Status::kUnsupported);
  CHECK_THAT(r.message, Catch::Contains("epilogue"));
}

TEST_CASE("the database key distinguishes epilogues and old files load as none",
          "[epilogue][database]") {
  test::KernelCase p = fast_problem({33, 17, 65}, Order::kRowMajor, "NT", "relu,bias");
  const EntryKey with = EntryKey::of("xgemm_fast", p);
  CHECK(to_string(with.epilogue) == "bias,relu");
  p.epilogue = Epilogue{};
  const EntryKey without = EntryKey::of("xgemm_fast", p);

  const nlohmann::json jw = with, jn = without;
  CHECK(jw.at("epilogue") == "bias,relu");
  CHECK_FALSE(jn.contains("epilogue"));
  CHECK(jw.get<EntryKey>() == with);
  CHECK(jn.get<EntryKey>() == without);
  CHECK(to_string(jw.get<EntryKey>().epilogue) == "bias,relu");

  CHECK_FALSE(with == without);
  CHECK_FALSE(with.same_family(without));
  CHECK((with < without) != (without < with));
  CHECK_THAT(with.to_string(), Catch::EndsWith("33x17x65 bias,relu"));
  CHECK(without.to_string().find("bias") == std::string::npos);
  CHECK(to_string(with.problem().epilogue) == "bias,relu");

  nlohmann::json bad = jw;
  bad["epilogue"] = "bias,swish";
  CHECK_THROWS_AS(bad.get<EntryKey>(), Error);
}

TEST_CASE("database files keep an entry per epilogue", "[epilogue][database]") {
  const std::string dir = test::temp_dir("epilogue-db");
  Database db;
  db.device.id = "test-device";
  db.device.name = "Test Device";
  DatabaseEntry plain;
  plain.key.kernel = "xgemm_fast";
  plain.key.shape = Shape{64, 64, 64};
  plain.parameters = {{"MWG", 32}};
  plain.gflops = 100;
  plain.time.median_ms = 1.0;
  plain.found.strategy = "random";
  DatabaseEntry fused = plain;
  fused.key.epilogue = parse_epilogue("bias,gelu");
  fused.gflops = 90;
  REQUIRE(db.put(plain, false) == PutOutcome::kAdded);
  REQUIRE(db.put(fused, false) == PutOutcome::kAdded);
  db.save(dir + "/db.json");
  const auto back = Database::load(dir + "/db.json");
  REQUIRE(back.entries().size() == 2);
  REQUIRE(back.find(plain.key));
  REQUIRE(back.find(fused.key));
  CHECK(back.find(plain.key)->gflops == 100);
  CHECK(back.find(fused.key)->gflops == 90);
}

}  // namespace gemmtune_tests::src_eval_test_opencl_evaluator_epilogue
