// SPDX-License-Identifier: Apache-2.0
// NaN and infinities in A and B reach C as IEEE arithmetic puts them there, through every kernel
// form the library can serve (one user database entry each) and its default choice: a NaN in a
// row of A makes that row of C NaN, an infinity makes it infinite or NaN by the signs and zeros of
// what it meets. A kernel that pads its tiles or splits K must never let its padding zeros meet
// an infinity in an output that is stored, nor lose one in a reduction. And alpha == 0 uses
// neither A nor B, as BLAS has it ("need not be set"): A and B full of NaN give C = beta * C.
// Row-major NN, beta 0 on a C full of NaN (never read) and beta 0.5; float through every form,
// double through the library's own picks where the device has it.
#include <cmath>
#include <limits>
#include <random>
#include <string>
#include <vector>

#include "tests/src/api/api_test_support.hpp"

using namespace gemmtune;

namespace {

struct Shape {
  size_t m, n, k;
};

// One form the library can serve: the entry's kernel and parameters.
struct Form {
  const char* label;
  const char* kernel;
  const char* parameters;
  Shape shape;
};

// Values on a grid of small binary fractions, zero among them (where 0 x Inf gives NaN).
float grid_value(std::mt19937& rng) {
  return static_cast<float>(static_cast<int>(rng() % 9) - 4) / 4.0f;
}

// Sets the special values: a NaN and an infinity in A's rows, a NaN and an infinity in B's
// columns, one of each at the last row, column and k, where edge tiles and K tails lie.
template <typename T>
void place_specials(std::vector<T>& a, std::vector<T>& b, const Shape& s) {
  const T inf = std::numeric_limits<T>::infinity();
  const T nan = std::numeric_limits<T>::quiet_NaN();
  auto at_a = [&](size_t i, size_t p) -> T& { return a[i * s.k + p]; };
  auto at_b = [&](size_t p, size_t j) -> T& { return b[p * s.n + j]; };
  at_a(1 % s.m, 2 % s.k) = nan;
  at_a(3 % s.m, 5 % s.k) = inf;
  at_a(s.m - 1, s.k - 1) = -inf;
  at_b(4 % s.k, 2 % s.n) = -inf;
  at_b(s.k - 1, s.n - 1) = nan;
}

// Relative error allowed per term of a sum of k exact grid products, in the call's precision.
template <typename T>
constexpr double kRelativePerK = 1e-5;
template <>
constexpr double kRelativePerK<double> = 1e-13;

// Whether `got` is what IEEE arithmetic gives for `expected` (computed in double from the same
// inputs): the same NaN-ness and the same infinity, else finite and within the tolerance.
template <typename T>
bool ieee_agrees(double got, double expected, size_t k) {
  if (std::isnan(expected)) return std::isnan(got);
  if (std::isinf(expected)) return got == expected;
  if (!std::isfinite(got)) return false;
  const double tolerance = kRelativePerK<T> * static_cast<double>(k + 1) * (1 + std::abs(expected));
  return std::abs(got - expected) <= tolerance;
}

// Runs the shape through Gemm at `alpha` and `beta` and checks every element of C against IEEE
// arithmetic (alpha 1: A and B hold the special values) or against beta * C (alpha 0: A and B
// are all NaN and must not be used), naming the first element that disagrees.
template <typename T>
void check_shape(const api_test::Cl& cl, const Shape& s, double alpha, double beta, unsigned seed) {
  std::mt19937 rng(seed);
  std::vector<T> a(s.m * s.k), b(s.k * s.n), c(s.m * s.n);
  for (auto& v : a) v = grid_value(rng);
  for (auto& v : b) v = grid_value(rng);
  for (auto& v : c) v = beta == 0.0 ? std::numeric_limits<T>::quiet_NaN() : grid_value(rng);
  if (alpha != 0.0) {
    place_specials(a, b, s);
  } else {
    for (std::vector<T>* x : {&a, &b}) {
      for (auto& v : *x) v = std::numeric_limits<T>::quiet_NaN();
    }
  }
  const std::vector<T> c_before = c;

  cl_mem da = cl.buffer(a), db = cl.buffer(b), dc = cl.buffer(c);
  cl_command_queue queue = cl.queue;
  const StatusCode status = Gemm<T>(Layout::kRowMajor, Transpose::kNo, Transpose::kNo, s.m, s.n,
                                    s.k, static_cast<T>(alpha), da, 0, s.k, db, 0, s.n,
                                    static_cast<T>(beta), dc, 0, s.n, &queue);
  INFO(StatusName(status) << ": " << LastErrorMessage());
  REQUIRE(status == StatusCode::kSuccess);
  cl.read(queue, dc, c);
  for (cl_mem m : {da, db, dc}) clReleaseMemObject(m);

  size_t wrong = 0, nan_rows = 0, inf_outputs = 0;
  std::string first;
  for (size_t i = 0; i < s.m; ++i) {
    for (size_t j = 0; j < s.n; ++j) {
      double expected = 0;
      for (size_t p = 0; alpha != 0.0 && p < s.k; ++p) {
        expected += static_cast<double>(a[i * s.k + p]) * static_cast<double>(b[p * s.n + j]);
      }
      expected *= alpha;
      if (beta != 0.0) expected += beta * static_cast<double>(c_before[i * s.n + j]);
      const double got = c[i * s.n + j];
      nan_rows += std::isnan(expected) && j == 0;
      inf_outputs += std::isinf(expected);
      if (!ieee_agrees<T>(got, expected, s.k) && wrong++ == 0) {
        first = "C[" + std::to_string(i) + "," + std::to_string(j) + "] is " + std::to_string(got) +
                ", expected " + std::to_string(expected);
      }
    }
  }
  INFO(s.m << "x" << s.n << "x" << s.k << (sizeof(T) == 8 ? " double" : " float") << " alpha "
           << alpha << " beta " << beta << ": " << first);
  CHECK(wrong == 0);
  // The inputs do what they are meant to: some rows NaN, some outputs infinite (alpha 1), or
  // none of either (alpha 0).
  CHECK((nan_rows > 0) == (alpha != 0.0));
  CHECK((inf_outputs > 0) == (alpha != 0.0));
}

void check_form(const api_test::Cl& cl, const Form& form, unsigned seed) {
  const std::string db = api_test::temp_dir() + "/special-values.json";
  const Shape& s = form.shape;
  api_test::write_database(db, cl.device_name,
                           {{form.kernel, "NN", static_cast<int>(s.m), static_cast<int>(s.n),
                             static_cast<int>(s.k), form.parameters}});
  REQUIRE(SetDatabase(db) == StatusCode::kSuccess);
  GemmProblem p;
  p.m = s.m;
  p.n = s.n;
  p.k = s.k;
  Explanation e;
  REQUIRE(Explain(p, cl.queue, &e) == StatusCode::kSuccess);
  INFO(form.label << ": served " << e.kernel << " " << e.parameters << " from " << e.source);
  REQUIRE(e.source == "user database");
  REQUIRE(e.kernel == form.kernel);
  for (double alpha : {1.0, 0.0}) {
    for (double beta : {0.0, 0.5}) check_shape<float>(cl, s, alpha, beta, seed++);
  }
  REQUIRE(SetDatabase("") == StatusCode::kSuccess);
}

}  // namespace

TEST_CASE("api: NaN and infinities in A and B reach C as IEEE arithmetic puts them",
          "[api][device]") {
  const api_test::Cl* cl = api_test::device_or_skip();
  if (!cl) return;
  const Shape odd{37, 29, 101};
  const Form forms[] = {
      {"tiles with edges", "xgemm_fast",
       R"({"MWG": 16, "NWG": 16, "KWG": 8, "MDIMC": 8, "NDIMC": 8, "VWM": 2, "VWN": 2})", odd},
      {"wide loads of aligned operands", "xgemm_fast",
       R"({"MWG": 32, "NWG": 32, "KWG": 16, "KWI": 16, "MDIMC": 8, "NDIMC": 8, "VWM": 2,
           "VWN": 2, "GLV": 4})",
       Shape{36, 44, 52}},
      {"split-K with the reduce kernel", "xgemm_fast",
       R"({"MWG": 16, "NWG": 16, "KWG": 8, "MDIMC": 8, "NDIMC": 8, "VWM": 2, "VWN": 2,
           "SPLITK": 3})",
       odd},
      {"split-K in one launch", "xgemm_fast",
       R"({"MWG": 16, "NWG": 16, "KWG": 8, "MDIMC": 8, "NDIMC": 8, "VWM": 2, "VWN": 2,
           "SPLITK": 3, "KREDUCE": 1})",
       odd},
      {"K slices", "xgemm_fast",
       R"({"MWG": 32, "NWG": 32, "KWG": 16, "KWI": 4, "MDIMC": 8, "NDIMC": 8, "VWM": 2,
           "VWN": 2, "KSL": 2})",
       odd},
      {"no local memory (clamped edges)", "xgemm_fast",
       R"({"MWG": 16, "NWG": 16, "KWG": 8, "MDIMC": 8, "NDIMC": 8, "VWM": 2, "VWN": 2, "LDS": 0,
           "STAGES": 1, "PREFETCH": 0, "GLV": 1})",
       odd},
      {"direct", "xgemm_direct", api_test::kDirectParameters, odd},
      {"padded by helper kernels", "xgemm",
       R"({"MWG": 32, "NWG": 32, "KWG": 32, "MDIMC": 8, "NDIMC": 8, "MDIMA": 8, "NDIMB": 8,
           "KWI": 2, "VWM": 1, "VWN": 1, "STRM": 0, "STRN": 0, "SA": 1, "SB": 1, "PADA": 1,
           "PADB": 1})",
       odd},
      {"skinny, a few rows, K split", "xgemm_skinny",
       R"({"SIDE": 1, "WGJ": 8, "WGK": 8, "NWI": 4, "VW": 4, "MB": 8, "KU": 2, "SPLITK": 2})",
       Shape{5, 61, 47}},
  };
  unsigned seed = 1;
  for (const Form& form : forms) {
    INFO(form.label);
    check_form(*cl, form, seed);
    seed += 4;  // check_form's two alphas by two betas
  }
  // And whatever the library picks by itself.
  REQUIRE(SetDatabase("") == StatusCode::kSuccess);
  for (const Shape& s : {odd, Shape{5, 61, 47}, Shape{64, 64, 64}}) {
    for (double alpha : {1.0, 0.0}) {
      for (double beta : {0.0, 0.5}) {
        check_shape<float>(*cl, s, alpha, beta, seed++);
        if (cl->has_fp64) check_shape<double>(*cl, s, alpha, beta, seed++);
      }
    }
  }
}
