// SPDX-License-Identifier: Apache-2.0
// Batched GEMM: the Problem fields and their serialisation, the batched reference, and one
// launch per batch on the OpenCL device (PoCL in CI) in the strided and the offsets layout,
// checked against Eigen entry by entry over awkward shapes, layouts, orders and precisions.
#include <catch2/catch.hpp>

#include <cmath>
#include <limits>
#include <optional>

#include <nlohmann/json.hpp>

#include "src/device/device.hpp"
#include "src/device/device_profile.hpp"
#include "src/eval/opencl_evaluator.hpp"
#include "src/kernel/gemm_view.hpp"
#include "src/kernel/kernel_source.hpp"
#include "src/verify/reference.hpp"
#include "tests/test_support.hpp"

// The file's own namespace: the test files compile in unity batches.
namespace gemmtune_tests::src_eval_test_opencl_evaluator_batched {

using namespace gemmtune;

using test::describe;

namespace {

// Batch sizes of the device tests: enough entries that a wrong entry index or stride shows,
// few enough that PoCL answers quickly.
constexpr int64_t kSmallBatch = 3;
constexpr int64_t kLargeBatch = 256;

const test::TestDevice& bench() {
  return test::test_device();
}

// Binaries go to the default cache ($XDG_CACHE_HOME/gemmtune under ctest), shared by the test
// processes.
std::unique_ptr<test::TemplateEvaluators> make_evaluator() {
  return test::make_test_evaluator(test::quick_evaluator_options());
}

test::KernelCase batched(const std::string& kernel, Shape shape, Order order,
                         const std::string& layout, int64_t batch, BatchLayout batch_layout,
                         Precision precision, double beta) {
  test::KernelCase p = test::problem_of(kernel, shape, order, layout);
  p.batch = batch;
  p.batch_layout = batch_layout;
  p.precision = precision;
  p.alpha = -1.25;
  p.beta = beta;
  return p;
}

// Awkward shapes x `layouts` x both orders x `batch_layouts`, alpha and beta set, and beta == 0
// on one shape per layout (C is NaN on the device). One build per layout and batch layout (row-
// and column-major share them), so that a test case stays within its time on a cold cache.
void check_batched(const std::string& kernel, Precision precision,
                   const std::vector<BatchLayout>& batch_layouts,
                   const std::vector<std::string>& layouts) {
  auto ev = make_evaluator();
  if (!ev) return test::unavailable("no OpenCL device");
  if (precision == Precision::kFP64 && !bench().device->info.has_fp64)
    return test::unavailable("the device has no cl_khr_fp64");
  const Configuration config = test::small_config(*ev, kernel);
  const std::vector<Shape> shapes{{1, 1, 1}, {7, 13, 5}, {33, 65, 17}, {100, 1, 300}};
  for (auto batch_layout : batch_layouts) {
    for (const auto& layout : layouts) {
      for (auto order : {Order::kRowMajor, Order::kColMajor}) {
        for (const auto& shape : shapes) {
          const test::KernelCase p =
              batched(kernel, shape, order, layout, kSmallBatch, batch_layout, precision, 0.75);
          const Result r = ev->evaluate(p, config);
          INFO(describe(p, r));
          CHECK(r.status == Status::kOk);
        }
        const test::KernelCase p = batched(kernel, Shape{33, 65, 17}, order, layout, kSmallBatch,
                                           batch_layout, precision, 0.0);
        const Result r = ev->evaluate(p, config);
        INFO(describe(p, r));
        CHECK(r.status == Status::kOk);
      }
    }
  }
}

}  // namespace

TEST_CASE("batch and its layout serialise, and old problems read as single GEMMs", "[batched]") {
  Problem single;
  single.shape = Shape{4, 5, 6};
  const nlohmann::json j = single;
  CHECK_FALSE(j.contains("batch_layout"));  // single problems serialise as before
  Problem old = j.get<Problem>();
  CHECK(old.batch == 1);
  CHECK(old.batch_layout == BatchLayout::kStrided);

  nlohmann::json legacy = j;
  legacy.erase("batch");
  CHECK(legacy.get<Problem>().batch == 1);

  Problem b = single;
  b.batch = 64;
  b.batch_layout = BatchLayout::kOffsets;
  const nlohmann::json jb = b;
  CHECK(jb.at("batch_layout") == "offsets");
  const Problem back = jb.get<Problem>();
  CHECK(back.batch == 64);
  CHECK(back.batch_layout == BatchLayout::kOffsets);
  CHECK(back.flops() == Approx(2.0 * 4 * 5 * 6 * 64));

  CHECK(parse_batch_layout("strided") == BatchLayout::kStrided);
  CHECK_THROWS_WITH(parse_batch_layout("pointers"), Catch::Contains("strided or offsets"));
  nlohmann::json bad = jb;
  bad["batch"] = 0;
  CHECK_THROWS(bad.get<Problem>());
}

TEST_CASE("batched builds add BATCH_LAYOUT, single ones do not", "[batched]") {
  Problem p;
  CHECK(batch_layout_define(p) == 0);
  p.batch_layout = BatchLayout::kOffsets;
  CHECK(batch_layout_define(p) == 0);  // batch 1 ignores the layout
  p.batch = 2;
  CHECK(batch_layout_define(p) == 2);
  p.batch_layout = BatchLayout::kStrided;
  CHECK(batch_layout_define(p) == 1);
  CHECK(build_options({}, Precision::kFP32, false, false, "", 1) ==
        "-DPRECISION=32 -DTRANSA=0 -DTRANSB=0 -DBATCH_LAYOUT=1");
  CHECK(build_options({}, Precision::kFP32, false, false, "") ==
        "-DPRECISION=32 -DTRANSA=0 -DTRANSB=0");
}

TEST_CASE("a batched launch puts the batch in dimension 2", "[batched]") {
  const std::string dir = test::source_path("kernel_templates");
  const KernelSpec direct = KernelSpec::load(dir + "/xgemm_direct.json");
  const KernelSpec fast = KernelSpec::load(dir + "/xgemm_fast.json");
  const KernelSpec xgemm = KernelSpec::load(dir + "/xgemm.json");
  CHECK(supports_batch(direct, BatchLayout::kStrided));
  CHECK(supports_batch(direct, BatchLayout::kOffsets));
  CHECK(supports_batch(fast, BatchLayout::kOffsets));
  CHECK_FALSE(supports_batch(xgemm, BatchLayout::kStrided));

  Problem p;
  p.shape = Shape{40, 20, 10};
  p.order = Order::kColMajor;
  p.batch = 5;
  const Context ctx{{"ELEM_BYTES", 4}};
  auto g = launch_geometry(direct, direct.defaults(), ctx, kernel_view(p));
  CHECK(g.global == std::vector<size_t>{2 * 8, 1 * 8, 5});
  CHECK(g.local == std::vector<size_t>{8, 8, 1});

  Configuration split = fast.defaults();
  split["SPLITK"] = 3;
  g = launch_geometry(fast, split, ctx, kernel_view(p));
  CHECK(g.global[2] == 15);  // SPLITK work-groups per entry
  REQUIRE(g.split_k);
  CHECK(g.split_k->reduce_global.size() == 3);
  CHECK(g.split_k->reduce_global[2] == 5);

  CHECK_THROWS_WITH(launch_geometry(xgemm, xgemm.defaults(), ctx, kernel_view(p)),
                    Catch::Contains("batch"));
}

TEST_CASE("the batched reference checks every entry and names the wrong one", "[batched]") {
  Problem p;
  p.shape = Shape{3, 4, 5};
  p.order = Order::kRowMajor;
  set_layout(p, "TN");
  p.batch = 4;
  p.alpha = 2.0;
  p.beta = -0.5;
  const auto in = make_inputs(p, 5);
  REQUIRE(in.a.size() == 4u * 15);
  REQUIRE(in.c.size() == 4u * 12);
  const Reference ref(p, in);
  // Entry by entry, the batch is the single problems of its slices.
  std::vector<double> c;
  for (int64_t e = 0; e < p.batch; ++e) {
    Problem one = p;
    one.batch = 1;
    HostMatrices h;
    h.a.assign(in.a.begin() + e * 15, in.a.begin() + (e + 1) * 15);
    h.b.assign(in.b.begin() + e * 20, in.b.begin() + (e + 1) * 20);
    h.c.assign(in.c.begin() + e * 12, in.c.begin() + (e + 1) * 12);
    const Reference single(one, h);
    CHECK(single.expected() == ref.expected(e));
    for (int64_t k = 0; k < 12; ++k) {
      const int64_t i = k / 4, j = k % 4;  // row-major
      c.push_back(static_cast<float>(single.expected()(i, j)));
    }
  }
  CHECK(ref.check(c).ok);
  c[2 * 12 + 5] *= 1.001;  // entry 2, row 1, column 1
  const auto bad = ref.check(c);
  CHECK_FALSE(bad.ok);
  CHECK(bad.wrong == 1);
  CHECK_THAT(bad.message, Catch::Contains("C[2](1,1)"));
  c[2 * 12 + 5] = std::numeric_limits<double>::quiet_NaN();
  CHECK_THAT(ref.check(c).message, Catch::Contains("C[2](1,1)"));
  c.pop_back();
  CHECK_FALSE(ref.check(c).ok);
}

const std::vector<std::string> kAllLayouts{"NN", "NT", "TN", "TT"};

TEST_CASE("strided batched xgemm_direct in every layout and order", "[device][batched]") {
  check_batched("xgemm_direct", Precision::kFP32, {BatchLayout::kStrided}, kAllLayouts);
}

TEST_CASE("offsets batched xgemm_direct in every layout and order", "[device][batched]") {
  check_batched("xgemm_direct", Precision::kFP32, {BatchLayout::kOffsets}, kAllLayouts);
}

TEST_CASE("batched xgemm_direct in FP64 in both batch layouts", "[device][batched]") {
  check_batched("xgemm_direct", Precision::kFP64, {BatchLayout::kStrided, BatchLayout::kOffsets},
                {"TN"});
}

TEST_CASE("batched xgemm_direct in 16acc32 in both batch layouts", "[device][batched]") {
  check_batched("xgemm_direct", Precision::kFP16Acc32,
                {BatchLayout::kStrided, BatchLayout::kOffsets}, {"NT"});
}

TEST_CASE("batched xgemm_fast in both batch layouts", "[device][batched]") {
  check_batched("xgemm_fast", Precision::kFP32, {BatchLayout::kStrided, BatchLayout::kOffsets},
                {"TT"});
}

TEST_CASE("batched xgemm_fast with split-K in 16acc32", "[device][batched]") {
  auto ev = make_evaluator();
  if (!ev) return test::unavailable("no OpenCL device");
  Configuration c = test::small_config(*ev, "xgemm_fast");
  c["SPLITK"] = 3;
  // The parts added by the reduce kernel, then in the main kernel (one counter per tile and
  // batch entry).
  for (int64_t in_kernel : {0, 1}) {
    c["KREDUCE"] = in_kernel;
    for (auto batch_layout : {BatchLayout::kStrided, BatchLayout::kOffsets}) {
      for (double beta : {0.0, 0.5}) {
        const test::KernelCase p = batched("xgemm_fast", Shape{33, 17, 40}, Order::kRowMajor, "NT",
                                           kSmallBatch, batch_layout, Precision::kFP16Acc32, beta);
        const Result r = ev->evaluate(p, c);
        INFO(describe(p, r) << " KREDUCE " << in_kernel);
        CHECK(r.status == Status::kOk);
      }
    }
  }
}

TEST_CASE("many small matrices run as one launch", "[device][batched]") {
  auto ev = make_evaluator();
  if (!ev) return test::unavailable("no OpenCL device");
  const Configuration c =
      ev->spec("xgemm_direct")
          .complete({{"WGD", 16}, {"MDIMCD", 8}, {"NDIMCD", 8}, {"MDIMAD", 8}, {"NDIMBD", 8}});
  for (auto batch_layout : {BatchLayout::kStrided, BatchLayout::kOffsets}) {
    const test::KernelCase p = batched("xgemm_direct", Shape{16, 16, 16}, Order::kColMajor, "NN",
                                       kLargeBatch, batch_layout, Precision::kFP32, 1.0);
    const Result r = ev->evaluate(p, c);
    INFO(describe(p, r));
    CHECK(r.status == Status::kOk);
    CHECK_FALSE(r.helper_kernels);
    CHECK(r.gflops == Approx(p.flops() / (r.time.median_ms * 1e6)));
  }
}

TEST_CASE("a template without batching refuses a batch clearly", "[device][batched]") {
  auto ev = make_evaluator();
  if (!ev) return test::unavailable("no OpenCL device");
  test::KernelCase p = batched("xgemm", Shape{8, 8, 8}, Order::kRowMajor, "NN", 4,
                               BatchLayout::kStrided, Precision::kFP32, 0.0);
  const Result r = ev->evaluate(p, ev->spec("xgemm").defaults());
  CHECK(r.status == Status::kUnsupported);
  CHECK_THAT(r.message, Catch::Contains("does not support batched problems"));
}

}  // namespace gemmtune_tests::src_eval_test_opencl_evaluator_batched
