// SPDX-License-Identifier: Apache-2.0
// NaN and infinities in A and B reach C as IEEE arithmetic puts them there, through every kernel
// form the library can serve (one user database entry each) and its default choice: a NaN in a
// row of A makes that row of C NaN, an infinity makes it infinite or NaN by the signs and zeros of
// what it meets. A kernel that pads its tiles or splits K must never let its padding zeros meet
// an infinity in an output that is stored, nor lose one in a reduction. And alpha == 0 uses
// neither A nor B, as BLAS has it ("need not be set"): A and B full of NaN give C = beta * C.
// Row-major NN, beta 0 on a C full of NaN (never read) and beta 0.5; float through every form,
// double (where the device has it) and half storage through the library's own picks.
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

const double kNaN = std::numeric_limits<double>::quiet_NaN();

// One form the library can serve: the entry's kernel and parameters.
struct Form {
  const char* label;
  const char* kernel;
  const char* parameters;
  Shape shape;
};

// A precision as the test handles it: conversions from and to double, the relative error allowed
// per term of a sum of k exact grid products, and its name.
template <typename T>
struct Elem {
  static T from(double v) { return static_cast<T>(v); }
  static double to(T v) { return v; }
  static constexpr double kRelativePerK = sizeof(T) == 8 ? 1e-13 : 1e-5;
  static constexpr const char* kName = sizeof(T) == 8 ? "double" : "float";
};
template <>
struct Elem<half> {
  static half from(double v) { return FloatToHalf(static_cast<float>(v)); }
  static double to(half v) { return HalfToFloat(v); }
  // Float sums of exact grid products, rounded once into half (2^-11 relative).
  static constexpr double kRelativePerK = 2e-3;
  static constexpr const char* kName = "half";
};

// Values on a grid of small binary fractions, zero among them (where 0 x Inf gives NaN).
float grid_value(std::mt19937& rng) {
  return static_cast<float>(static_cast<int>(rng() % 9) - 4) / 4.0f;
}

// Sets the special values: a NaN and an infinity in A's rows, a NaN and an infinity in B's
// columns, one of each at the last row, column and k, where edge tiles and K tails lie.
template <typename T>
void place_specials(std::vector<T>& a, std::vector<T>& b, const Shape& s) {
  const double inf = std::numeric_limits<double>::infinity();
  auto set = [](T& x, double v) { x = Elem<T>::from(v); };
  auto at_a = [&](size_t i, size_t p) -> T& { return a[i * s.k + p]; };
  auto at_b = [&](size_t p, size_t j) -> T& { return b[p * s.n + j]; };
  set(at_a(1 % s.m, 2 % s.k), kNaN);
  set(at_a(3 % s.m, 5 % s.k), inf);
  set(at_a(s.m - 1, s.k - 1), -inf);
  set(at_b(4 % s.k, 2 % s.n), -inf);
  set(at_b(s.k - 1, s.n - 1), kNaN);
}

// Whether `got` is what IEEE arithmetic gives for `expected` (computed in double from the same
// inputs): the same NaN-ness and the same infinity, else finite and within the tolerance.
template <typename T>
bool ieee_agrees(double got, double expected, size_t k) {
  if (std::isnan(expected)) return std::isnan(got);
  if (std::isinf(expected)) return got == expected;
  if (!std::isfinite(got)) return false;
  const double tolerance =
      Elem<T>::kRelativePerK * static_cast<double>(k + 1) * (1 + std::abs(expected));
  return std::abs(got - expected) <= tolerance;
}

// Runs the shape through Gemm at `alpha` and `beta` and checks every element of C against IEEE
// arithmetic (alpha 1: A and B hold the special values) or against beta * C (alpha 0: A and B
// are all NaN and must not be used), naming the first element that disagrees.
template <typename T>
void check_shape(const api_test::Cl& cl, const Shape& s, double alpha, double beta, unsigned seed) {
  std::mt19937 rng(seed);
  std::vector<T> a(s.m * s.k), b(s.k * s.n), c(s.m * s.n);
  for (auto& v : a) v = Elem<T>::from(grid_value(rng));
  for (auto& v : b) v = Elem<T>::from(grid_value(rng));
  for (auto& v : c) v = Elem<T>::from(beta == 0.0 ? kNaN : grid_value(rng));
  if (alpha != 0.0) {
    place_specials(a, b, s);
  } else {
    for (std::vector<T>* x : {&a, &b}) {
      for (auto& v : *x) v = Elem<T>::from(kNaN);
    }
  }
  const std::vector<T> c_before = c;

  cl_mem da = cl.buffer(a), db = cl.buffer(b), dc = cl.buffer(c);
  cl_command_queue queue = cl.queue;
  const StatusCode status = Gemm<T>(Layout::kRowMajor, Transpose::kNo, Transpose::kNo, s.m, s.n,
                                    s.k, Elem<T>::from(alpha), da, 0, s.k, db, 0, s.n,
                                    Elem<T>::from(beta), dc, 0, s.n, &queue);
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
        expected += Elem<T>::to(a[i * s.k + p]) * Elem<T>::to(b[p * s.n + j]);
      }
      expected *= alpha;
      if (beta != 0.0) expected += beta * Elem<T>::to(c_before[i * s.n + j]);
      const double got = Elem<T>::to(c[i * s.n + j]);
      nan_rows += std::isnan(expected) && j == 0;
      inf_outputs += std::isinf(expected);
      if (!ieee_agrees<T>(got, expected, s.k) && wrong++ == 0) {
        first = "C[" + std::to_string(i) + "," + std::to_string(j) + "] is " + std::to_string(got) +
                ", expected " + std::to_string(expected);
      }
    }
  }
  INFO(s.m << "x" << s.n << "x" << s.k << " " << Elem<T>::kName << " alpha " << alpha << " beta "
           << beta << ": " << first);
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
      {"half-wide loads along k", "xgemm_fast",
       R"({"MWG": 32, "NWG": 32, "KWG": 16, "KWI": 16, "MDIMC": 8, "NDIMC": 8, "VWM": 2,
           "VWN": 2, "GLV": 4, "GLH": 1})",
       Shape{37, 29, 102}},
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
      {"producer rows", "xgemm_fast",
       R"({"MWG": 32, "NWG": 32, "KWG": 16, "KWI": 8, "MDIMC": 8, "NDIMC": 8, "VWM": 2,
           "VWN": 2, "WSP": 4, "STAGES": 3, "PREFETCH": 0})",
       odd},
      {"K-major B tile with producer rows", "xgemm_fast",
       R"({"MWG": 32, "NWG": 32, "KWG": 16, "KWI": 16, "MDIMC": 8, "NDIMC": 8, "VWM": 2,
           "VWN": 2, "GLV": 4, "BKM": 1, "WSP": 8, "STAGES": 2, "PREFETCH": 0})",
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
        check_shape<half>(*cl, s, alpha, beta, seed++);
      }
    }
  }
}
