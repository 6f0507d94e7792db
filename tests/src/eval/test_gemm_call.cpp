// SPDX-License-Identifier: Apache-2.0
// The one GEMM call path on caller-provided buffers: offsets, leading dimensions larger than the
// matrices, both storage orders and transposes, beta 0 with NaN in C, host padding and split-K
// (its parts added by a reduce kernel or in the main kernel), a compiled call enqueued again, and
// batches with caller offsets, each against a plain loop.
#include <catch2/catch.hpp>

#include <cmath>
#include <limits>
#include <random>

#include "src/eval/gemm_call.hpp"
#include "src/eval/program_builder.hpp"
#include "tests/test_support.hpp"

// The file's own namespace: the test files compile in unity batches.
namespace gemmtune_tests::src_eval_test_gemm_call {

using namespace gemmtune;
using gemmtune::test::source_path;

namespace {

struct Setup {
  const Device& device;
  cl::Context context;
  cl::CommandQueue queue;
  ProgramBuilder builder;
  explicit Setup(const Device& d)
      : device(d),
        context(std::vector<cl::Device>{d.device}),
        queue(context, d.device, CL_QUEUE_PROFILING_ENABLE),
        builder(d, context, nullptr, source_path("kernel_templates"), test::test_device().cache_dir,
                1) {}
};

// One matrix of `rows` x `cols` (as stored) at `offset` with leading dimension `ld` inside a
// buffer of `size` floats; the rest of the buffer holds `fill`.
struct HostOperand {
  std::vector<float> data;
  int64_t offset = 0, ld = 0;
  size_t index(Order order, int64_t r, int64_t c) const {
    return static_cast<size_t>(offset + (order == Order::kRowMajor ? r * ld + c : r + c * ld));
  }
  float& at(Order order, int64_t r, int64_t c) { return data[index(order, r, c)]; }
};

HostOperand make_operand(Order order, int64_t rows, int64_t cols, int64_t offset, int64_t extra_ld,
                         float fill, std::mt19937& rng) {
  HostOperand o;
  o.offset = offset;
  o.ld = (order == Order::kRowMajor ? cols : rows) + extra_ld;
  const int64_t lines = order == Order::kRowMajor ? rows : cols;
  o.data.assign(static_cast<size_t>(offset + o.ld * lines + 7), fill);
  std::uniform_int_distribution<int> dist(-4, 4);  // small integers: exact in float
  for (int64_t r = 0; r < rows; ++r) {
    for (int64_t c = 0; c < cols; ++c) o.at(order, r, c) = static_cast<float>(dist(rng));
  }
  return o;
}

cl::Buffer upload(Setup& s, const std::vector<float>& v) {
  return cl::Buffer(s.context, CL_MEM_READ_WRITE | CL_MEM_COPY_HOST_PTR, v.size() * sizeof(float),
                    const_cast<float*>(v.data()));
}

// Runs `config` of `kernel` on a problem with offset, padded-ld operands and checks every
// element of C's buffer: the matrix against a loop, everything around it untouched. Returns the
// kernels the call launched.
size_t check_call(Setup& s, const std::string& kernel, const Configuration& partial, Order order,
                  bool trans_a, bool trans_b, double beta, Shape shape = Shape{37, 29, 45}) {
  const KernelSpec spec = KernelSpec::load_named(source_path("kernel_templates"), kernel);
  Problem p;
  p.shape = shape;
  p.order = order;
  p.trans_a = trans_a;
  p.trans_b = trans_b;
  p.alpha = 2.0;
  p.beta = beta;
  const int64_t m = p.shape.m, n = p.shape.n, k = p.shape.k;
  std::mt19937 rng(11);
  const float nan = std::numeric_limits<float>::quiet_NaN();
  HostOperand a = make_operand(order, trans_a ? k : m, trans_a ? m : k, 5, 3, nan, rng);
  HostOperand b = make_operand(order, trans_b ? n : k, trans_b ? k : n, 9, 1, nan, rng);
  HostOperand c = make_operand(order, m, n, 3, 2, -7.0f, rng);
  if (beta == 0.0) {
    for (int64_t i = 0; i < m; ++i) {
      for (int64_t j = 0; j < n; ++j) c.at(order, i, j) = nan;  // must not be read
    }
  }
  std::vector<float> expected = c.data;
  for (int64_t i = 0; i < m; ++i) {
    for (int64_t j = 0; j < n; ++j) {
      double sum = 0;
      for (int64_t l = 0; l < k; ++l) {
        sum += static_cast<double>(trans_a ? a.at(order, l, i) : a.at(order, i, l)) *
               (trans_b ? b.at(order, j, l) : b.at(order, l, j));
      }
      const double old = beta == 0.0 ? 0.0 : beta * c.at(order, i, j);
      expected[c.index(order, i, j)] = static_cast<float>(p.alpha * sum + old);
    }
  }
  cl::Buffer da = upload(s, a.data), db = upload(s, b.data), dc = upload(s, c.data);
  GemmBuffers buffers;
  buffers.a = da();
  buffers.b = db();
  buffers.c = dc();
  buffers.a_offset = a.offset;
  buffers.b_offset = b.offset;
  buffers.c_offset = c.offset;
  buffers.lda = a.ld;
  buffers.ldb = b.ld;
  buffers.ldc = c.ld;

  GemmCall::Compiled compiled = GemmCall::compile(s.builder, spec, spec.complete(partial), p);
  INFO(kernel << " " << to_string(compiled.result.status) << " " << compiled.result.message);
  REQUIRE(compiled.call);
  compiled.call->bind(buffers, s.queue);
  // The count known before any device agrees with the bound call's.
  CHECK(compiled.call->launches() == GemmCall::launches(spec, spec.complete(partial), p, buffers));
  // Twice: the compiled call is enqueued again, and beta != 0 then sees its own output (an
  // in-kernel split-K reduction whose counters were not left at 0 would find no last work-group
  // and leave C as it was).
  for (int run = 0; run < 2; ++run) {
    if (run == 1) s.queue.enqueueWriteBuffer(dc, CL_TRUE, 0, c.data.size() * 4, c.data.data());
    cl::Event main;
    compiled.call->enqueue(s.queue, &main);
    s.queue.finish();
    CHECK(main.getProfilingInfo<CL_PROFILING_COMMAND_END>() >=
          main.getProfilingInfo<CL_PROFILING_COMMAND_START>());
    std::vector<float> got(c.data.size());
    s.queue.enqueueReadBuffer(dc, CL_TRUE, 0, got.size() * 4, got.data());
    size_t wrong = 0;
    for (size_t i = 0; i < got.size(); ++i) {
      if (!(got[i] == expected[i])) ++wrong;
    }
    CHECK(wrong == 0);
  }
  return compiled.call->launches();
}

// Calls `f(order, beta, trans_a, trans_b)` for both orders, beta 0 (C full of NaN) and 0.5, and
// every transpose, with the case named for a failure.
template <typename F>
void for_each_case(F&& f) {
  for (Order order : {Order::kRowMajor, Order::kColMajor}) {
    for (double beta : {0.0, 0.5}) {
      for (bool trans_a : {false, true}) {
        for (bool trans_b : {false, true}) {
          INFO("order " << (order == Order::kRowMajor ? "row" : "col") << " beta " << beta
                        << " trans " << trans_a << trans_b);
          f(order, beta, trans_a, trans_b);
        }
      }
    }
  }
}

// C after `runs` calls of `config` on fresh inputs of `p` (values no sum adds exactly), as bits.
std::vector<std::vector<uint32_t>> c_bits(Setup& s, const std::string& kernel,
                                          const Configuration& partial, const Problem& p,
                                          int runs) {
  const KernelSpec spec = KernelSpec::load_named(source_path("kernel_templates"), kernel);
  const int64_t m = p.shape.m, n = p.shape.n, k = p.shape.k;
  std::mt19937 rng(5);
  std::uniform_real_distribution<float> dist(-1.0f, 1.0f);
  auto values = [&](int64_t count) {
    std::vector<float> v(static_cast<size_t>(count));
    for (float& x : v) x = dist(rng);
    return v;
  };
  const std::vector<float> a = values(m * k), b = values(k * n), c = values(m * n);
  cl::Buffer da = upload(s, a), db = upload(s, b), dc = upload(s, c);
  GemmBuffers buffers;
  buffers.a = da();
  buffers.b = db();
  buffers.c = dc();
  GemmCall::Compiled compiled = GemmCall::compile(s.builder, spec, spec.complete(partial), p);
  INFO(kernel << " " << to_string(compiled.result.status) << " " << compiled.result.message);
  REQUIRE(compiled.call);
  compiled.call->bind(buffers, s.queue);
  std::vector<std::vector<uint32_t>> out;
  for (int run = 0; run < runs; ++run) {
    s.queue.enqueueWriteBuffer(dc, CL_TRUE, 0, c.size() * 4, c.data());
    compiled.call->enqueue(s.queue);
    std::vector<uint32_t> got(c.size());
    s.queue.enqueueReadBuffer(dc, CL_TRUE, 0, got.size() * 4, got.data());
    out.push_back(got);
  }
  return out;
}

}  // namespace

TEST_CASE("a GEMM call computes on caller buffers with offsets and leading dimensions",
          "[gemm_call][pocl]") {
  const auto& d = test::test_device();
  REQUIRE(d.device);
  Setup s(*d.device);
  const Configuration direct = {
      {"WGD", 16}, {"MDIMCD", 8}, {"NDIMCD", 8}, {"MDIMAD", 8}, {"NDIMBD", 8}};
  const Configuration padded = {{"MWG", 16},  {"NWG", 16},  {"KWG", 16}, {"MDIMC", 8},
                                {"NDIMC", 8}, {"MDIMA", 8}, {"NDIMB", 8}};
  const Configuration split = {{"MWG", 16}, {"NWG", 16}, {"KWG", 8}, {"MDIMC", 8}, {"NDIMC", 8},
                               {"VWM", 2},  {"VWN", 2},  {"KWI", 2}, {"SPLITK", 2}};
  for (Order order : {Order::kRowMajor, Order::kColMajor}) {
    for (double beta : {0.0, 0.5}) {
      INFO("order " << (order == Order::kRowMajor ? "row" : "col") << " beta " << beta);
      check_call(s, "xgemm_direct", direct, order, false, true, beta);
      check_call(s, "xgemm_direct", direct, order, true, false, beta);
      // xgemm pads through scratch copies: offsets and leading dimensions go through pad_copy.
      check_call(s, "xgemm", padded, order, true, true, beta);
      check_call(s, "xgemm_fast", split, order, false, false, beta);
    }
  }
}

TEST_CASE("split-K adds its parts in the main kernel in one launch on caller buffers",
          "[gemm_call][pocl][splitk]") {
  const auto& d = test::test_device();
  REQUIRE(d.device);
  Setup s(*d.device);
  Configuration split = {{"MWG", 16}, {"NWG", 16}, {"KWG", 8}, {"MDIMC", 8}, {"NDIMC", 8},
                         {"VWM", 2},  {"VWN", 2},  {"KWI", 2}, {"SPLITK", 3}};
  CHECK(check_call(s, "xgemm_fast", split, Order::kColMajor, false, false, 0.5) == 2);
  split["KREDUCE"] = 1;
  // 37 x 29 leaves partial tiles at both edges; K = 45 makes parts of 16, 16 and 13, K = 9 parts
  // of 8 and 1 and an empty one, whose work-group still counts itself in.
  for (const Shape& shape : {Shape{37, 29, 45}, Shape{37, 29, 9}}) {
    INFO(shape.to_string());
    for_each_case([&](Order order, double beta, bool trans_a, bool trans_b) {
      CHECK(check_call(s, "xgemm_fast", split, order, trans_a, trans_b, beta, shape) == 1);
    });
  }
}

TEST_CASE("split-K in one launch adds up the same bits as in two and from call to call",
          "[gemm_call][pocl][splitk]") {
  const auto& d = test::test_device();
  REQUIRE(d.device);
  Setup s(*d.device);
  Problem p;
  p.shape = Shape{45, 38, 301};
  p.alpha = 1.5;
  p.beta = -0.25;
  constexpr int kRuns = 4;
  for (const std::string kernel : {"xgemm_fast", "xgemm_skinny"}) {
    Configuration two = kernel == "xgemm_fast"
                            ? Configuration{{"MWG", 16},  {"NWG", 16}, {"KWG", 8}, {"MDIMC", 8},
                                            {"NDIMC", 8}, {"VWM", 2},  {"VWN", 2}, {"SPLITK", 4}}
                            : Configuration{{"WGJ", 4}, {"WGK", 4}, {"VW", 1}, {"SPLITK", 4}};
    Configuration one = two;
    one["KREDUCE"] = 1;
    INFO(kernel);
    const auto reduced = c_bits(s, kernel, two, p, 1);
    const auto in_kernel = c_bits(s, kernel, one, p, kRuns);
    for (const auto& run : in_kernel) CHECK(run == reduced.front());
  }
}

TEST_CASE("xgemm_skinny computes on caller buffers with offsets and leading dimensions",
          "[gemm_call][pocl][skinny]") {
  const auto& d = test::test_device();
  REQUIRE(d.device);
  Setup s(*d.device);
  // Offsets that are not multiples of the vector width: the element-aligned vector loads. Then K
  // in 3 parts added in the main kernel: 29 columns are a block of NWG = 16 and a partial one,
  // each with its counter (SIDE 0 of a column-major call; the row-major one walks 29 rows).
  for (int64_t side : {0, 1}) {
    const Configuration skinny = {{"SIDE", side}, {"WGJ", 4}, {"WGK", 4}, {"VW", 4}};
    Configuration one_launch = skinny;
    one_launch["SPLITK"] = 3;
    one_launch["KREDUCE"] = 1;
    INFO("side " << side);
    for_each_case([&](Order order, double beta, bool trans_a, bool trans_b) {
      CHECK(check_call(s, "xgemm_skinny", skinny, order, trans_a, trans_b, beta,
                       Shape{3, 29, 45}) == 1);
      CHECK(check_call(s, "xgemm_skinny", one_launch, order, trans_a, trans_b, beta,
                       Shape{3, 29, 45}) == 1);
    });
  }
}

TEST_CASE("a GEMM call refuses bad configurations as results and bad buffers as errors",
          "[gemm_call][pocl]") {
  const auto& d = test::test_device();
  REQUIRE(d.device);
  Setup s(*d.device);
  const KernelSpec spec = KernelSpec::load_named(source_path("kernel_templates"), "xgemm_direct");
  Problem p;
  p.shape = Shape{8, 8, 8};
  Configuration bad = spec.defaults();
  bad["WGD"] = 3;
  auto compiled = GemmCall::compile(s.builder, spec, bad, p);
  CHECK_FALSE(compiled.call);
  CHECK(compiled.result.status == Status::kInvalid);
  p.epilogue = parse_epilogue("bias");
  compiled = GemmCall::compile(s.builder, spec, spec.defaults(), p);
  CHECK(compiled.result.status == Status::kUnsupported);
  p.epilogue = Epilogue{};
  p.batch = 3;
  p.batch_layout = BatchLayout::kOffsets;
  compiled = GemmCall::compile(s.builder, spec, spec.defaults(), p);
  REQUIRE(compiled.call);
  cl::Buffer buf(s.context, CL_MEM_READ_WRITE, 4096);
  GemmBuffers g;
  g.a = g.b = g.c = buf();
  g.a_offsets = {0, 64};  // one short
  g.b_offsets = g.c_offsets = {0, 64, 128};
  CHECK_THROWS_WITH(compiled.call->bind(g, s.queue), Catch::Contains("3 offsets per operand"));
  g.a_offsets = {0, 64, 128};
  g.lda = 4;
  CHECK_THROWS_WITH(compiled.call->bind(g, s.queue), Catch::Contains("lda = 4"));
}

}  // namespace gemmtune_tests::src_eval_test_gemm_call
