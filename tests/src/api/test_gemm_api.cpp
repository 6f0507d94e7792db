// SPDX-License-Identifier: Apache-2.0
// libgemmtune through its public header alone, as an application uses it: every storage order
// and transpose on odd shapes with offsets and padded leading dimensions, beta == 0 on a C full of
// NaN, float, double and half, batches, the epilogue, four threads on their own queues, argument
// errors, where configurations come from (Explain, SetDatabase, stale entries, WarmUp), and a
// database entry that adds split-K's parts in the main kernel.
#include <catch2/catch.hpp>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <limits>
#include <random>
#include <string>
#include <thread>
#include <vector>

#include "gemmtune/gemmtune.hpp"
#include "tests/src/api/api_test_support.hpp"

using namespace gemmtune;
using gemmtune::api_test::Cl;

namespace {

template <typename T>
struct Elem;
template <>
struct Elem<float> {
  static float from(double v) { return static_cast<float>(v); }
  static double to(float v) { return v; }
  static double tolerance(int64_t k) { return 1e-5 * static_cast<double>(k) + 1e-5; }
};
template <>
struct Elem<double> {
  static double from(double v) { return v; }
  static double to(double v) { return v; }
  static double tolerance(int64_t k) { return 1e-12 * static_cast<double>(k) + 1e-12; }
};
template <>
struct Elem<half> {
  static half from(double v) { return FloatToHalf(static_cast<float>(v)); }
  static double to(half v) { return HalfToFloat(v); }
  // Stored in half: one rounding of the result (2^-11 relative) dominates the float sums.
  static double tolerance(int64_t k) { return 2e-3 * static_cast<double>(k) + 2e-3; }
};

// One operand as stored: `rows` x `cols` of the caller's view in `layout`, leading dimension
// `ld`, at `offset` of a buffer of `size` elements.
struct Stored {
  size_t rows, cols, ld, offset;
  bool row_major;
  size_t index(size_t r, size_t c) const { return offset + (row_major ? r * ld + c : c * ld + r); }
  size_t end() const {
    return offset + (row_major ? (rows - 1) * ld + cols : (cols - 1) * ld + rows);
  }
};

// Values on a grid of small binary fractions, exact in half as in float.
double value(std::mt19937& rng) {
  return static_cast<double>(static_cast<int>(rng() % 17) - 8) / 8.0;
}

double activate(double x, EpilogueActivation act) {
  if (act == EpilogueActivation::kRelu) return x > 0 ? x : 0;
  if (act == EpilogueActivation::kGelu) {
    const double c = std::sqrt(2.0 / M_PI);
    return 0.5 * x * (1.0 + std::tanh(c * (x + 0.044715 * x * x * x)));
  }
  return x;
}

struct Case {
  Layout layout = Layout::kRowMajor;
  Transpose ta = Transpose::kNo, tb = Transpose::kNo;
  size_t m = 33, n = 17, k = 9;
  double alpha = 1.0, beta = 0.0;
  size_t batch = 1;
  bool offsets_batch = false;
  bool bias = false;
  EpilogueActivation activation = EpilogueActivation::kNone;
  size_t shift = 0;  // added to every offset and leading dimension: another placement
};

std::string describe(const Case& c) {
  char text[200];
  std::snprintf(text, sizeof text, "%s %c%c %zux%zux%zu alpha %g beta %g batch %zu%s",
                c.layout == Layout::kRowMajor ? "row" : "col", c.ta == Transpose::kNo ? 'N' : 'T',
                c.tb == Transpose::kNo ? 'N' : 'T', c.m, c.n, c.k, c.alpha, c.beta, c.batch,
                c.offsets_batch ? " offsets" : "");
  return text;
}

// Runs `c` through the library on `queue` and checks every element of C (and that nothing else
// of C's buffer changed) against a plain loop in double. Returns the library's status.
template <typename T>
StatusCode run_and_check(const Cl& cl, cl_command_queue queue, const Case& c, unsigned seed) {
  using E = Elem<T>;
  std::mt19937 rng(seed);
  const bool row = c.layout == Layout::kRowMajor;
  const bool ta = c.ta != Transpose::kNo, tb = c.tb != Transpose::kNo;
  // Leading dimensions larger than needed and offsets that are no multiple of anything.
  Stored a{ta ? c.k : c.m, ta ? c.m : c.k, 0, 5 + c.shift, row};
  Stored b{tb ? c.n : c.k, tb ? c.k : c.n, 0, 7 + c.shift, row};
  Stored cc{c.m, c.n, 0, 11 + c.shift, row};
  for (Stored* s : {&a, &b, &cc}) s->ld = (row ? s->cols : s->rows) + 3 + c.shift;
  // The GEMMs of a batch: a stride apart, or (offsets) in reverse order with gaps.
  auto place = [&](const Stored& s, std::vector<size_t>& starts) {
    const size_t span = s.end() - s.offset + 4;
    for (size_t e = 0; e < c.batch; ++e) {
      starts.push_back(c.offsets_batch ? s.offset + (c.batch - 1 - e) * (span + 2)
                                       : s.offset + e * span);
    }
    return starts.back() + span + (c.offsets_batch ? (c.batch - 1) * (span + 2) : 0) + 16;
  };
  std::vector<size_t> a_starts, b_starts, c_starts;
  const size_t a_size = place(a, a_starts), b_size = place(b, b_starts),
               c_size = place(cc, c_starts);
  std::vector<T> ha(a_size), hb(b_size), hc(c_size), hbias(c.n);
  for (auto& v : ha) v = E::from(value(rng));
  for (auto& v : hb) v = E::from(value(rng));
  for (auto& v : hbias) v = E::from(value(rng));
  const double nan = std::numeric_limits<double>::quiet_NaN();
  for (auto& v : hc) v = E::from(c.beta == 0.0 ? nan : value(rng));
  const std::vector<T> hc_before = hc;

  cl_mem da = cl.buffer(ha), db = cl.buffer(hb), dc = cl.buffer(hc), dbias = cl.buffer(hbias);
  StatusCode status;
  T alpha = E::from(c.alpha), beta = E::from(c.beta);
  cl_event event = nullptr;
  if (c.batch > 1 || c.offsets_batch) {
    if (c.offsets_batch) {
      status = GemmBatched<T>(c.layout, c.ta, c.tb, c.m, c.n, c.k, alpha, da, a_starts.data(), a.ld,
                              db, b_starts.data(), b.ld, beta, dc, c_starts.data(), cc.ld, c.batch,
                              &queue, &event);
    } else {
      status = GemmStridedBatched<T>(c.layout, c.ta, c.tb, c.m, c.n, c.k, alpha, da, a.offset, a.ld,
                                     c.batch > 1 ? a_starts[1] - a_starts[0] : 0, db, b.offset,
                                     b.ld, c.batch > 1 ? b_starts[1] - b_starts[0] : 0, beta, dc,
                                     cc.offset, cc.ld, c.batch > 1 ? c_starts[1] - c_starts[0] : 0,
                                     c.batch, &queue, &event);
    }
  } else if (c.bias || c.activation != EpilogueActivation::kNone) {
    EpilogueOptions epilogue;
    epilogue.bias = c.bias ? dbias : nullptr;
    epilogue.activation = c.activation;
    status = GemmEpilogue<T>(c.layout, c.ta, c.tb, c.m, c.n, c.k, alpha, da, a.offset, a.ld, db,
                             b.offset, b.ld, beta, dc, cc.offset, cc.ld, epilogue, &queue, &event);
  } else {
    status = Gemm<T>(c.layout, c.ta, c.tb, c.m, c.n, c.k, alpha, da, a.offset, a.ld, db, b.offset,
                     b.ld, beta, dc, cc.offset, cc.ld, &queue, &event);
  }
  if (status == StatusCode::kSuccess) {
    REQUIRE(event != nullptr);
    REQUIRE(clWaitForEvents(1, &event) == CL_SUCCESS);
    clReleaseEvent(event);
    cl.read(queue, dc, hc);
  }
  for (cl_mem m : {da, db, dc, dbias}) clReleaseMemObject(m);
  if (status != StatusCode::kSuccess) return status;

  std::vector<bool> inside(c_size, false);
  int64_t wrong = 0;
  std::string first_wrong;
  for (size_t e = 0; e < c.batch; ++e) {
    Stored ae = a, be = b, ce = cc;
    ae.offset = a_starts[e];
    be.offset = b_starts[e];
    ce.offset = c_starts[e];
    for (size_t i = 0; i < c.m; ++i) {
      for (size_t j = 0; j < c.n; ++j) {
        double sum = 0;
        for (size_t p = 0; p < c.k; ++p) {
          sum += E::to(ha[ta ? ae.index(p, i) : ae.index(i, p)]) *
                 E::to(hb[tb ? be.index(j, p) : be.index(p, j)]);
        }
        double expected = c.alpha * sum;
        if (c.beta != 0.0) expected += c.beta * E::to(hc_before[ce.index(i, j)]);
        if (c.bias) expected += E::to(hbias[j]);
        expected = activate(expected, c.activation);
        const double got = E::to(hc[ce.index(i, j)]);
        inside[ce.index(i, j)] = true;
        const double tol = E::tolerance(static_cast<int64_t>(c.k)) * (1 + std::abs(expected));
        if (!(std::abs(got - expected) <= tol)) {
          if (wrong++ == 0) {
            first_wrong = "C[" + std::to_string(i) + "," + std::to_string(j) + "] of GEMM " +
                          std::to_string(e) + " is " + std::to_string(got) + ", expected " +
                          std::to_string(expected);
          }
        }
      }
    }
  }
  int64_t touched = 0;  // elements of C's buffer outside every matrix that changed
  for (size_t i = 0; i < c_size; ++i) {
    if (inside[i]) continue;
    const double before = E::to(hc_before[i]), after = E::to(hc[i]);
    if (!(before == after || (std::isnan(before) && std::isnan(after)))) ++touched;
  }
  INFO(describe(c) << ": " << first_wrong);
  CHECK(wrong == 0);
  CHECK(touched == 0);
  return status;
}

template <typename T>
void every_layout_and_transpose(const Cl& cl, double alpha, double beta) {
  unsigned seed = 1;
  for (Layout layout : {Layout::kRowMajor, Layout::kColMajor}) {
    for (Transpose ta : {Transpose::kNo, Transpose::kYes}) {
      for (Transpose tb : {Transpose::kNo, Transpose::kYes}) {
        Case c;
        c.layout = layout;
        c.ta = ta;
        c.tb = tb;
        c.alpha = alpha;
        c.beta = beta;
        INFO(describe(c));
        const StatusCode s = run_and_check<T>(cl, cl.queue, c, seed++);
        INFO(StatusName(s) << ": " << LastErrorMessage());
        REQUIRE(s == StatusCode::kSuccess);
      }
    }
  }
}

struct OddShape {
  int m, n, k;
};

// A user database `name` holding the xgemm_fast configuration `params` at one odd shape for every
// transpose: each call is served by that entry exactly (its parameters holding each of
// `expected`) and agrees with the reference, at each beta in turn.
void served_in_every_transpose(const Cl& cl, const std::string& name, const char* params,
                               const OddShape& shape, const std::vector<std::string>& expected,
                               double alpha, const std::vector<double>& betas, unsigned seed) {
  std::vector<api_test::DbEntry> entries;
  for (const char* layout : {"NN", "NT", "TN", "TT"}) {
    entries.push_back({"xgemm_fast", layout, shape.m, shape.n, shape.k, params});
  }
  const std::string db = api_test::temp_dir() + "/" + name;
  api_test::write_database(db, cl.device_name, entries);
  REQUIRE(SetDatabase(db) == StatusCode::kSuccess);
  for (Transpose ta : {Transpose::kNo, Transpose::kYes}) {
    for (Transpose tb : {Transpose::kNo, Transpose::kYes}) {
      GemmProblem p;
      p.m = shape.m;
      p.n = shape.n;
      p.k = shape.k;
      p.a_transpose = ta;
      p.b_transpose = tb;
      Explanation e;
      REQUIRE(Explain(p, cl.queue, &e) == StatusCode::kSuccess);
      CHECK(e.source == "user database");
      CHECK(e.exact);
      for (const auto& x : expected) CHECK_THAT(e.parameters, Catch::Contains(x));
      Case c;
      c.ta = ta;
      c.tb = tb;
      c.m = shape.m;
      c.n = shape.n;
      c.k = shape.k;
      c.alpha = alpha;
      for (double beta : betas) {
        c.beta = beta;
        INFO(describe(c));
        const StatusCode s = run_and_check<float>(cl, cl.queue, c, seed++);
        INFO(StatusName(s) << ": " << LastErrorMessage());
        REQUIRE(s == StatusCode::kSuccess);
      }
    }
  }
  REQUIRE(SetDatabase("") == StatusCode::kSuccess);
}

}  // namespace

TEST_CASE("api: float GEMM in every storage order and transpose with offsets and padded ld",
          "[api][device]") {
  const Cl* cl = api_test::device_or_skip();
  if (!cl) return;
  SECTION("beta 0 on a C full of NaN") {
    every_layout_and_transpose<float>(*cl, 1.0, 0.0);
  }
  SECTION("alpha and beta") {
    every_layout_and_transpose<float>(*cl, 0.5, -1.5);
  }
}

TEST_CASE("api: double GEMM in every storage order and transpose", "[api][device]") {
  const Cl* cl = api_test::device_or_skip();
  if (!cl) return;
  if (!cl->has_fp64) {
    Case c;
    const StatusCode s = run_and_check<double>(*cl, cl->queue, c, 1);
    CHECK(s == StatusCode::kUnsupported);
    return;
  }
  every_layout_and_transpose<double>(*cl, 1.0, 0.0);
  every_layout_and_transpose<double>(*cl, 0.75, 2.0);
}

TEST_CASE("api: half storage GEMM in every storage order and transpose", "[api][device]") {
  const Cl* cl = api_test::device_or_skip();
  if (!cl) return;
  every_layout_and_transpose<half>(*cl, 1.0, 0.0);
  every_layout_and_transpose<half>(*cl, 0.5, 1.0);
}

TEST_CASE("api: strided and offsets batches", "[api][device]") {
  const Cl* cl = api_test::device_or_skip();
  if (!cl) return;
  unsigned seed = 100;
  for (bool offsets : {false, true}) {
    for (Layout layout : {Layout::kRowMajor, Layout::kColMajor}) {
      Case c;
      c.layout = layout;
      c.tb = Transpose::kYes;
      c.m = 19;
      c.n = 7;
      c.k = 13;
      c.batch = 3;
      c.offsets_batch = offsets;
      c.beta = offsets ? 0.0 : 1.0;
      INFO(describe(c));
      const StatusCode s = run_and_check<float>(*cl, cl->queue, c, seed++);
      INFO(StatusName(s) << ": " << LastErrorMessage());
      REQUIRE(s == StatusCode::kSuccess);
    }
  }
  Case h;  // half storage batches too
  h.batch = 2;
  h.m = 9;
  h.n = 10;
  h.k = 11;
  const StatusCode s = run_and_check<half>(*cl, cl->queue, h, 7);
  INFO(LastErrorMessage());
  REQUIRE(s == StatusCode::kSuccess);
}

TEST_CASE("api: fused bias and activation", "[api][device]") {
  const Cl* cl = api_test::device_or_skip();
  if (!cl) return;
  unsigned seed = 200;
  for (auto act : {EpilogueActivation::kRelu, EpilogueActivation::kGelu}) {
    for (Layout layout : {Layout::kRowMajor, Layout::kColMajor}) {
      Case c;
      c.layout = layout;
      c.ta = Transpose::kYes;
      c.bias = act == EpilogueActivation::kRelu;
      c.activation = act;
      c.beta = 0.5;
      INFO(describe(c));
      const StatusCode s = run_and_check<float>(*cl, cl->queue, c, seed++);
      INFO(StatusName(s) << ": " << LastErrorMessage());
      REQUIRE(s == StatusCode::kSuccess);
    }
  }
}

TEST_CASE("api: four threads, each on its own queue", "[api][device]") {
  const Cl* cl = api_test::device_or_skip();
  if (!cl) return;
  constexpr int kThreads = 4;
  std::vector<cl_command_queue> queues;
  for (int t = 0; t < kThreads; ++t) queues.push_back(cl->new_queue());
  std::vector<int> failures(kThreads, 0);
  std::vector<std::string> messages(kThreads);
  std::vector<std::thread> threads;
  for (int t = 0; t < kThreads; ++t) {
    threads.emplace_back([&, t] {
      // Catch's assertions are not thread-safe: count here, assert after the join.
      for (int i = 0; i < 6; ++i) {
        Case c;
        c.layout = (t + i) % 2 ? Layout::kColMajor : Layout::kRowMajor;
        c.ta = i % 3 == 0 ? Transpose::kYes : Transpose::kNo;
        c.m = 20 + static_cast<size_t>(t);
        c.n = 9 + static_cast<size_t>(i);
        c.k = 7;
        c.beta = i % 2 ? 1.0 : 0.0;
        const auto s =
            api_test::run_quietly<float>(*cl, queues[static_cast<size_t>(t)], c.layout, c.ta, c.m,
                                         c.n, c.k, c.beta, static_cast<unsigned>(t * 100 + i));
        if (!s.empty()) {
          ++failures[static_cast<size_t>(t)];
          messages[static_cast<size_t>(t)] = s;
        }
      }
    });
  }
  for (auto& th : threads) th.join();
  for (int t = 0; t < kThreads; ++t) {
    INFO("thread " << t << ": " << messages[static_cast<size_t>(t)]);
    CHECK(failures[static_cast<size_t>(t)] == 0);
  }
  for (auto q : queues) clReleaseCommandQueue(q);
}

TEST_CASE("api: argument errors are statuses", "[api][device]") {
  const Cl* cl = api_test::device_or_skip();
  if (!cl) return;
  std::vector<float> host(64, 1.0f);
  cl_mem buf = cl->buffer(host);
  cl_command_queue q = cl->queue;
  const auto R = Layout::kRowMajor;
  const auto N = Transpose::kNo;
  // Leading dimension of A (row-major 4 x 8) smaller than its 8 columns.
  CHECK(Gemm<float>(R, N, N, 4, 4, 8, 1.f, buf, 0, 7, buf, 0, 4, 0.f, buf, 0, 4, &q) ==
        StatusCode::kInvalidLeadingDimension);
  CHECK(std::string(LastErrorMessage()).find("leading dimension of A") != std::string::npos);
  CHECK(Gemm<float>(R, N, N, 0, 4, 4, 1.f, buf, 0, 4, buf, 0, 4, 0.f, buf, 0, 4, &q) ==
        StatusCode::kInvalidDimension);
  CHECK(Gemm<float>(R, N, N, 9, 9, 9, 1.f, buf, 0, 9, buf, 0, 9, 0.f, buf, 0, 9, &q) ==
        StatusCode::kBufferTooSmall);
  CHECK(Gemm<float>(R, N, N, 4, 4, 4, 1.f, buf, 0, 4, buf, 0, 4, 0.f, buf, 0, 4, nullptr) ==
        StatusCode::kInvalidArgument);
  CHECK(Gemm<float>(R, N, N, 4, 4, 4, 1.f, nullptr, 0, 4, buf, 0, 4, 0.f, buf, 0, 4, &q) ==
        StatusCode::kInvalidArgument);
  CHECK(Gemm<float>(static_cast<Layout>(7), N, N, 4, 4, 4, 1.f, buf, 0, 4, buf, 0, 4, 0.f, buf, 0,
                    4, &q) == StatusCode::kInvalidArgument);
  CHECK(GemmBatched<float>(R, N, N, 2, 2, 2, 1.f, buf, nullptr, 2, buf, nullptr, 2, 0.f, buf,
                           nullptr, 2, 2, &q) == StatusCode::kInvalidArgument);
  clReleaseMemObject(buf);
}

TEST_CASE("api: half conversions round to nearest even", "[api]") {
  CHECK(FloatToHalf(1.0f).bits == 0x3c00);
  CHECK(FloatToHalf(-2.0f).bits == 0xc000);
  CHECK(FloatToHalf(65504.0f).bits == 0x7bff);
  CHECK(FloatToHalf(65520.0f).bits == 0x7c00);               // rounds to infinity
  CHECK(FloatToHalf(1.0f + 1.0f / 2048).bits == 0x3c00);     // a tie, to even
  CHECK(FloatToHalf(1.0f + 3.0f / 2048).bits == 0x3c02);     // a tie, to even (up)
  CHECK(FloatToHalf(std::ldexp(1.0f, -24)).bits == 0x0001);  // smallest subnormal
  CHECK(FloatToHalf(std::ldexp(1.0f, -25)).bits == 0x0000);  // a tie with zero
  CHECK(std::isnan(HalfToFloat(FloatToHalf(std::nanf("")))));
  for (uint16_t bits : {0x0001, 0x03ff, 0x0400, 0x3555, 0x7bff, 0xfbff}) {
    half h;
    h.bits = bits;
    CHECK(FloatToHalf(HalfToFloat(h)).bits == bits);
  }
}

TEST_CASE("api: where the configuration comes from", "[api][device]") {
  const Cl* cl = api_test::device_or_skip();
  if (!cl) return;
  REQUIRE(SetDatabase("") == StatusCode::kSuccess);
  GemmProblem p;
  p.m = 48;
  p.n = 40;
  p.k = 24;
  p.a_transpose = Transpose::kYes;
  p.b_transpose = Transpose::kYes;
  Explanation e;
  REQUIRE(Explain(p, cl->queue, &e) == StatusCode::kSuccess);
  CHECK(e.device == cl->device_name);
  CHECK(!e.kernel.empty());
  CHECK(!e.parameters.empty());
  CHECK(!e.source.empty());

  // A user database for this device: an exact entry for the problem wins over every other layer.
  const std::string dir = api_test::temp_dir();
  const std::string user = dir + "/user.json";
  api_test::write_database(user, cl->device_name,
                           {{"xgemm_direct", "TT", 48, 40, 24, api_test::kDirectParameters}});
  REQUIRE(SetDatabase(user) == StatusCode::kSuccess);
  REQUIRE(Explain(p, cl->queue, &e) == StatusCode::kSuccess);
  CHECK(e.source == "user database");
  CHECK(e.origin == user);
  CHECK(e.kernel == "xgemm_direct");
  CHECK(e.exact);
  CHECK(e.parameters.find("WGD=16") != std::string::npos);
  // ... and a call runs it correctly.
  Case c;
  c.ta = c.tb = Transpose::kYes;
  c.m = 48;
  c.n = 40;
  c.k = 24;
  REQUIRE(run_and_check<float>(*cl, cl->queue, c, 300) == StatusCode::kSuccess);
  // A nearer shape is not needed: another shape takes the nearest entry.
  p.m = 50;
  REQUIRE(Explain(p, cl->queue, &e) == StatusCode::kSuccess);
  CHECK(e.source == "user database");
  CHECK(!e.exact);
  CHECK(e.distance > 0);

  // A stale entry (a value the template does not declare) is passed over with a note.
  const std::string stale = dir + "/stale.json";
  api_test::write_database(stale, cl->device_name,
                           {{"xgemm_direct", "TT", 50, 40, 24,
                             R"({"WGD": 24, "MDIMCD": 8, "NDIMCD": 8, "MDIMAD": 8,
                                 "NDIMBD": 8, "KWID": 2, "VWMD": 1, "VWND": 1,
                                 "PADA": 1, "PADB": 1, "NOSUCH": 3})"}});
  REQUIRE(SetDatabase(stale) == StatusCode::kSuccess);
  REQUIRE(Explain(p, cl->queue, &e) == StatusCode::kSuccess);
  CHECK(e.source != "user database");
  const bool noted = std::any_of(e.notes.begin(), e.notes.end(), [](const std::string& n) {
    return n.find("stale") != std::string::npos;
  });
  CHECK(noted);

  // A database of another device does not apply.
  const std::string other = dir + "/other.json";
  api_test::write_database(other, "Some Other Device 9000",
                           {{"xgemm_direct", "TT", 50, 40, 24, api_test::kDirectParameters}});
  REQUIRE(SetDatabase(other) == StatusCode::kSuccess);
  REQUIRE(Explain(p, cl->queue, &e) == StatusCode::kSuccess);
  CHECK(e.source != "user database");

  // A file that is not a database changes nothing.
  const std::string bad = dir + "/bad.json";
  std::ofstream(bad) << "{\"not\": \"a database\"}";
  CHECK(SetDatabase(bad) == StatusCode::kInvalidDatabase);
  CHECK(SetDatabase(dir + "/missing.json") == StatusCode::kInvalidDatabase);
  REQUIRE(SetDatabase("") == StatusCode::kSuccess);
}

TEST_CASE("api: repeated calls on new buffers and new placements", "[api][device]") {
  const Cl* cl = api_test::device_or_skip();
  if (!cl) return;
  // A call that hits the library's cache sets only the buffer arguments again when offsets and
  // leading dimensions are those of the call before, and binds everything anew otherwise. Every
  // run below has its own buffers (released after it, so handles may come back) and is checked.
  auto runs = [&](const char* path) {
    Case c;  // 33x17x9 row-major NN, beta 0 on a C of NaN
    unsigned seed = 400;
    for (size_t shift : {0, 0, 2, 2, 0}) {
      c.shift = shift;
      INFO(path << ": " << describe(c) << " shift " << shift);
      const StatusCode s = run_and_check<float>(*cl, cl->queue, c, seed++);
      INFO(StatusName(s) << ": " << LastErrorMessage());
      REQUIRE(s == StatusCode::kSuccess);
    }
    c.bias = true;
    c.activation = EpilogueActivation::kRelu;
    for (unsigned i = 0; i < 2; ++i) {
      INFO(path << ": bias and ReLU, run " << i);
      const StatusCode s = run_and_check<float>(*cl, cl->queue, c, seed++);
      INFO(StatusName(s) << ": " << LastErrorMessage());
      REQUIRE(s == StatusCode::kSuccess);
    }
  };
  REQUIRE(SetDatabase("") == StatusCode::kSuccess);
  runs("the default choice");
  // xgemm pads every operand through helper kernels, whose arguments include the caller's
  // buffers too.
  const std::string db = api_test::temp_dir() + "/xgemm.json";
  api_test::write_database(db, cl->device_name,
                           {{"xgemm", "NN", 33, 17, 9,
                             R"({"MWG": 32, "NWG": 32, "KWG": 32, "MDIMC": 8, "NDIMC": 8,
                                 "MDIMA": 8, "NDIMB": 8, "KWI": 2, "VWM": 1, "VWN": 1,
                                 "STRM": 0, "STRN": 0, "SA": 1, "SB": 1, "PADA": 1,
                                 "PADB": 1})"}});
  REQUIRE(SetDatabase(db) == StatusCode::kSuccess);
  GemmProblem p;
  p.m = 33;
  p.n = 17;
  p.k = 9;
  Explanation e;
  REQUIRE(Explain(p, cl->queue, &e) == StatusCode::kSuccess);
  REQUIRE(e.kernel == "xgemm");
  runs("xgemm, padded");
  // xgemm_fast with ALDCOPY copies the operands of odd leading dimensions (all of them here)
  // through helper kernels that read the caller's A and B.
  const std::string aligned = api_test::temp_dir() + "/aldcopy.json";
  api_test::write_database(aligned, cl->device_name,
                           {{"xgemm_fast", "NN", 33, 17, 9,
                             R"({"MWG": 16, "NWG": 32, "KWG": 8, "MDIMC": 4, "NDIMC": 8,
                                 "VWM": 2, "VWN": 2, "GLV": 4, "ALDCOPY": 1})"}});
  REQUIRE(SetDatabase(aligned) == StatusCode::kSuccess);
  REQUIRE(Explain(p, cl->queue, &e) == StatusCode::kSuccess);
  REQUIRE(e.kernel == "xgemm_fast");
  CHECK_THAT(e.parameters, Catch::Contains("ALDCOPY=1"));
  runs("xgemm_fast, aligned copies");
  REQUIRE(SetDatabase("") == StatusCode::kSuccess);
}

TEST_CASE("api: a database entry with split-K in one launch", "[api][device][splitk]") {
  const Cl* cl = api_test::device_or_skip();
  if (!cl) return;
  // xgemm_fast with SPLITK=3 and KREDUCE=1: the last work-group of each tile adds the parts, with
  // counters the library allocates, zeroes once and the kernel leaves zeroed (a second call would
  // find no last work-group otherwise).
  const char* one_launch = R"({"MWG": 16, "NWG": 16, "KWG": 8, "MDIMC": 8, "NDIMC": 8,
                               "VWM": 2, "VWN": 2, "SPLITK": 3, "KREDUCE": 1})";
  served_in_every_transpose(*cl, "one-launch.json", one_launch, {37, 29, 101},
                            {"KREDUCE=1", "SPLITK=3"}, 1.5, {0.0, -0.5, 0.0}, 700);
}

TEST_CASE("api: a database entry with the tail split", "[api][device][splitk]") {
  const Cl* cl = api_test::device_or_skip();
  if (!cl) return;
  // xgemm_fast with TAIL=1: 7 x 5 tiles of 16, of which those past the last multiple of the
  // device's compute units are split 4 ways along K and added by their last part (counters and
  // a workspace sized by the compute units, both the library's); called twice per case.
  const char* tail = R"({"MWG": 16, "NWG": 16, "KWG": 8, "MDIMC": 8, "NDIMC": 8,
                         "VWM": 2, "VWN": 2, "SPLITK": 4, "KREDUCE": 1, "TAIL": 1})";
  served_in_every_transpose(*cl, "tail-split.json", tail, {100, 75, 131}, {"TAIL=1", "SPLITK=4"},
                            1.25, {0.0, 0.5}, 1100);
}

TEST_CASE("api: a database entry with K slices", "[api][device][kslices]") {
  const Cl* cl = api_test::device_or_skip();
  if (!cl) return;
  // xgemm_fast with KSL=2: twice the work-items for the same tiles, each half of every K tile;
  // slice 0 adds the other's sums and stores.
  const char* sliced = R"({"MWG": 32, "NWG": 32, "KWG": 16, "KWI": 4, "MDIMC": 8, "NDIMC": 8,
                           "VWM": 2, "VWN": 2, "KSL": 2})";
  served_in_every_transpose(*cl, "k-slices.json", sliced, {53, 41, 150}, {"KSL=2"}, 0.75,
                            {0.0, 1.5}, 900);
}

TEST_CASE("api: Explain reports the selection's prediction and takes the safe path",
          "[api][device]") {
  const Cl* cl = api_test::device_or_skip();
  if (!cl) return;
  const std::string dir = api_test::temp_dir();
  const std::string params = R"({"WGD": 16, "MDIMCD": 8, "NDIMCD": 8, "MDIMAD": 8, "NDIMBD": 8,
                                 "KWID": 2, "VWMD": 1, "VWND": 1, "PADA": 1, "PADB": 1})";
  const std::string wide = R"({"WGD": 32, "MDIMCD": 8, "NDIMCD": 8, "MDIMAD": 8, "NDIMBD": 8,
                               "KWID": 2, "VWMD": 1, "VWND": 1, "PADA": 1, "PADB": 1})";
  const std::string user = dir + "/tuned.json";
  api_test::write_database(
      user, cl->device_name,
      {{"xgemm_direct", "NN", 64, 64, 64, params}, {"xgemm_direct", "NN", 256, 256, 256, wide}});
  REQUIRE(SetDatabase(user) == StatusCode::kSuccess);
  GemmProblem p;
  p.m = 100;
  p.n = 90;
  p.k = 110;
  Explanation e;
  REQUIRE(Explain(p, cl->queue, &e) == StatusCode::kSuccess);
  CHECK(e.source == "user database");
  CHECK(!e.exact);
  CHECK(e.predicted_gflops > 0);
  CHECK(e.reason.find("predicted") != std::string::npos);
  CHECK(e.alternatives.size() == 1);  // the other entry
  // Deterministic: asked again (after the plans are dropped), the same answer.
  const Explanation first = e;
  REQUIRE(SetDatabase(user) == StatusCode::kSuccess);
  REQUIRE(Explain(p, cl->queue, &e) == StatusCode::kSuccess);
  CHECK(e.entry == first.entry);
  CHECK(e.parameters == first.parameters);
  CHECK(e.predicted_gflops == first.predicted_gflops);

  // Entries whose baseline beats them by far: the safe path (xgemm_direct's defaults) runs, and
  // the explanation says why.
  const std::string slow = dir + "/slow.json";
  const std::string baseline = R"("baseline": {"gflops": 1e9, "by": "clblast"})";
  api_test::write_database(slow, cl->device_name,
                           {{"xgemm_direct", "NN", 64, 64, 64, params, baseline},
                            {"xgemm_direct", "NN", 256, 256, 256, wide, baseline}});
  REQUIRE(SetDatabase(slow) == StatusCode::kSuccess);
  REQUIRE(Explain(p, cl->queue, &e) == StatusCode::kSuccess);
  CHECK(e.kernel == "xgemm_direct");
  CHECK(e.origin == "template defaults");
  CHECK(e.parameters.find("VWMD=1") == std::string::npos);  // not the entries' parameters
  CHECK(e.reason.find("safe path") != std::string::npos);
  CHECK(e.reason.find(slow) != std::string::npos);
  CHECK(e.reason.find("loses to the baseline") != std::string::npos);
  // ... and the call runs it correctly.
  Case c;
  c.m = 100;
  c.n = 90;
  c.k = 110;
  CHECK(run_and_check<float>(*cl, cl->queue, c, 301) == StatusCode::kSuccess);
  REQUIRE(SetDatabase("") == StatusCode::kSuccess);
}

TEST_CASE("api: WarmUp builds the programs of a list of problems", "[api][device]") {
  const Cl* cl = api_test::device_or_skip();
  if (!cl) return;
  std::vector<GemmProblem> problems(2);
  problems[0].m = problems[0].n = problems[0].k = 31;
  problems[1] = problems[0];
  problems[1].layout = Layout::kColMajor;
  problems[1].batch_count = 4;
  REQUIRE(WarmUp(cl->queue, problems) == StatusCode::kSuccess);
  GemmProblem zero;
  CHECK(WarmUp(cl->queue, {zero}) == StatusCode::kInvalidDimension);
}

TEST_CASE("api: producer rows where the profile's rule takes them, computed right",
          "[api][explain][producers]") {
  const Cl* cl = api_test::device_or_skip();
  if (!cl) return;
  // The H200's profile on the test device: its rule gives a configuration served away from its
  // shape producer rows where the launch gives each compute unit at most 2 work-groups (here 2
  // work-groups of 64x64 in all) of at least 4 K tiles (64 / 16), and with a K tile of 16 the
  // K-major B tile too. PoCL builds the lockstep form.
  const api_test::ForcedProfile forced("sm_90");
  const std::string user = api_test::temp_dir() + "/user.json";
  api_test::write_database(user, cl->device_name,
                           {{"xgemm_fast", "NN", 724, 724, 256,
                             R"({"MWG": 64, "NWG": 64, "MDIMC": 16, "NDIMC": 8, "KWG": 16,
                                 "KWI": 8, "VWM": 2, "VWN": 2, "PREFETCH": 1, "STAGES": 1})"}});
  REQUIRE(SetDatabase(user) == StatusCode::kSuccess);
  GemmProblem p;
  p.m = 128;
  p.n = 64;
  p.k = 64;
  Explanation e;
  REQUIRE(Explain(p, cl->queue, &e) == StatusCode::kSuccess);
  CHECK(e.source == "user database");
  CHECK(e.parameters.find("WSP=8") != std::string::npos);
  CHECK(e.parameters.find("PREFETCH=0") != std::string::npos);
  CHECK(e.parameters.find("BKM=1") != std::string::npos);
  CHECK(e.reason.find("producer rows") != std::string::npos);
  Case c;
  c.m = 128;
  c.n = 64;
  c.k = 64;
  CHECK(run_and_check<float>(*cl, cl->queue, c, 301) == StatusCode::kSuccess);
  // 3 K tiles a work-group: as stored.
  p.k = 48;
  REQUIRE(Explain(p, cl->queue, &e) == StatusCode::kSuccess);
  CHECK(e.parameters.find("WSP=0") != std::string::npos);
  REQUIRE(SetDatabase("") == StatusCode::kSuccess);
}

TEST_CASE("api: the split of K the profile's rule weighs at the call's shape, computed right",
          "[api][explain][splitk]") {
  const Cl* cl = api_test::device_or_skip();
  if (!cl) return;
  // The H200's profile on the test device: a split-K configuration measured with 8 parts at one
  // shape is served at another with the split its rule weighs fastest there, for the test
  // device's compute units.
  const api_test::ForcedProfile forced("sm_90");
  const std::string user = api_test::temp_dir() + "/user.json";
  api_test::write_database(user, cl->device_name,
                           {{"xgemm_fast", "NN", 64, 64, 2048,
                             R"({"MWG": 16, "NWG": 16, "MDIMC": 8, "NDIMC": 8, "KWG": 8,
                                 "KWI": 8, "VWM": 2, "VWN": 2, "SPLITK": 8})"}});
  REQUIRE(SetDatabase(user) == StatusCode::kSuccess);
  // 40x56: 12 tiles of 16x16, enough for the few compute units of a CPU device without a
  // split, whose parts would each add a reduction's traffic.
  GemmProblem p;
  p.m = 40;
  p.n = 56;
  p.k = 700;
  Explanation e;
  REQUIRE(Explain(p, cl->queue, &e) == StatusCode::kSuccess);
  INFO(e.parameters << " " << e.reason);
  CHECK(e.source == "user database");
  CHECK(e.parameters.find("SPLITK=1,") != std::string::npos);
  CHECK(e.reason.find("SPLITK=1 (measured with 8)") != std::string::npos);
  Case c;
  c.m = 40;
  c.n = 56;
  c.k = 700;
  CHECK(run_and_check<float>(*cl, cl->queue, c, 301) == StatusCode::kSuccess);
  // The entry's own shape: as measured.
  p.m = p.n = 64;
  p.k = 2048;
  REQUIRE(Explain(p, cl->queue, &e) == StatusCode::kSuccess);
  CHECK(e.parameters.find("SPLITK=8,") != std::string::npos);
  REQUIRE(SetDatabase("") == StatusCode::kSuccess);
}

TEST_CASE("an untuned device runs its profile's configuration chosen offline and says so",
          "[api][explain][offline]") {
  const Cl* cl = api_test::device_or_skip();
  if (!cl) return;
  // The profile the user names for a card the matching does not know (the test device is PoCL):
  // gfx1012 carries starting configurations chosen offline, and no database of this build is of
  // this device.
  ::unsetenv("GEMMTUNE_DB");
  const api_test::ForcedProfile forced("gfx1012");
  REQUIRE(SetDatabase("") == StatusCode::kSuccess);
  GemmProblem p;
  p.m = 96;
  p.n = 80;
  p.k = 64;
  Explanation e;
  REQUIRE(Explain(p, cl->queue, &e) == StatusCode::kSuccess);
  CHECK(e.profile == "gfx1012");
  CHECK(e.source == "offline choice");
  CHECK(e.kernel == "xgemm_fast");
  CHECK(e.reason.find("chosen offline for gfx1012, not measured") != std::string::npos);
  CHECK(e.origin.find("gfx1012") != std::string::npos);
  // ... and it computes correctly here too.
  Case c;
  c.m = 96;
  c.n = 80;
  c.k = 64;
  CHECK(run_and_check<float>(*cl, cl->queue, c, 300) == StatusCode::kSuccess);
}
