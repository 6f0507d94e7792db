// SPDX-License-Identifier: Apache-2.0
// Test data, precision conversions and the Eigen reference with its tolerance rule.
#include <catch2/catch.hpp>

#include <algorithm>
#include <cmath>
#include <limits>
#include <string>

#include "src/verify/reference.hpp"

// The file's own namespace: the test files compile in unity batches.
namespace gemmtune_tests::src_verify_test_reference {

using namespace gemmtune;

namespace {
// `c` with a NaN at `index` must fail the check, and the message must say so.
void check_nan_caught(const Reference& ref, std::vector<double> c, int64_t index) {
  c[static_cast<size_t>(index)] = std::numeric_limits<double>::quiet_NaN();
  const Verification v = ref.check(c);
  CHECK_FALSE(v.ok);
  CHECK_THAT(v.message, Catch::Contains("NaN"));
}
}  // namespace

TEST_CASE("half conversions round to nearest even", "[reference]") {
  CHECK(float_to_half(1.0f) == 0x3c00);
  CHECK(float_to_half(-2.0f) == 0xc000);
  CHECK(float_to_half(65504.0f) == 0x7bff);
  CHECK(float_to_half(65520.0f) == 0x7c00);  // rounds past the largest half
  CHECK(float_to_half(std::ldexp(1.0f, -24)) == 0x0001);
  CHECK(float_to_half(std::ldexp(1.0f, -26)) == 0x0000);
  CHECK(float_to_half(1.0f + std::ldexp(1.0f, -11)) == 0x3c00);  // tie goes to even
  CHECK(float_to_half(1.0f + 3 * std::ldexp(1.0f, -11)) == 0x3c02);
  CHECK(std::isnan(half_to_float(float_to_half(std::numeric_limits<float>::quiet_NaN()))));
  for (uint16_t h : {0x0001, 0x03ff, 0x0400, 0x3555, 0x7bff, 0xbc00}) {
    CHECK(float_to_half(half_to_float(h)) == h);
  }
  CHECK(round_to_precision(1.0 + 1e-9, Precision::kFP32) == 1.0);
  CHECK(round_to_precision(1.0 + 1e-9, Precision::kFP64) == 1.0 + 1e-9);
  // Packed as the device stores them: IEEE half, float and double, one after the other.
  const std::vector<double> values{0.5, 1.25, -3.0};
  auto bytes_of = [](const auto& v) {
    const auto* b = reinterpret_cast<const unsigned char*>(v.data());
    return std::vector<unsigned char>(b, b + v.size() * sizeof(v[0]));
  };
  CHECK(pack_elements(values, Precision::kFP64) == bytes_of(values));
  CHECK(pack_elements(values, Precision::kFP32) ==
        bytes_of(std::vector<float>{0.5f, 1.25f, -3.0f}));
  CHECK(pack_elements(values, Precision::kFP16) ==
        bytes_of(std::vector<uint16_t>{float_to_half(0.5f), float_to_half(1.25f),
                                       float_to_half(-3.0f)}));
}

TEST_CASE("inputs are fixed by the seed and do not cancel", "[reference]") {
  Problem p;
  p.shape = Shape{7, 5, 3};
  const auto a = make_inputs(p, 42), b = make_inputs(p, 42), c = make_inputs(p, 43);
  CHECK(a.a == b.a);
  CHECK(a.a != c.a);
  CHECK(a.a != a.b);
  REQUIRE(a.a.size() == 21);
  for (double v : a.a) {
    CHECK(v >= 0.5);
    CHECK(v < 1.5);
    CHECK(v == static_cast<float>(v));  // representable in FP32
  }
}

TEST_CASE("tolerance grows with sqrt(K) from the unit roundoff", "[reference]") {
  CHECK(relative_tolerance(Precision::kFP32, 1) == Approx(kToleranceFactor * std::ldexp(1.0, -24)));
  CHECK(relative_tolerance(Precision::kFP32, 400) ==
        Approx(20 * relative_tolerance(Precision::kFP32, 1)));
  CHECK(relative_tolerance(Precision::kFP64, 1) < relative_tolerance(Precision::kFP32, 1));
}

TEST_CASE("the reference matches a hand loop in every order and layout", "[reference]") {
  for (auto order : {Order::kRowMajor, Order::kColMajor}) {
    for (const std::string layout : {"NN", "NT", "TN", "TT"}) {
      Problem p;
      p.shape = Shape{4, 3, 5};
      p.order = order;
      set_layout(p, layout);
      p.alpha = -1.5;
      p.beta = 0.5;
      const auto in = make_inputs(p, 7);
      const Reference ref(p, in);
      const auto& s = p.shape;
      std::vector<double> c(static_cast<size_t>(s.m * s.n));
      for (int64_t i = 0; i < s.m; ++i) {
        for (int64_t j = 0; j < s.n; ++j) {
          double sum = 0;
          for (int64_t k = 0; k < s.k; ++k) {
            const double a = p.trans_a ? in.a[stored_index(order, s.k, s.m, k, i)]
                                       : in.a[stored_index(order, s.m, s.k, i, k)];
            const double b = p.trans_b ? in.b[stored_index(order, s.n, s.k, j, k)]
                                       : in.b[stored_index(order, s.k, s.n, k, j)];
            sum += a * b;
          }
          const auto idx = stored_index(order, s.m, s.n, i, j);
          c[idx] = p.alpha * sum + p.beta * in.c[idx];
          CHECK(ref.expected()(i, j) == Approx(c[idx]).epsilon(1e-14));
        }
      }
      // Rounded to FP32 the result still passes; a 1e-4 relative change of one output does not.
      std::vector<double> rounded(c.size());
      for (size_t i = 0; i < c.size(); ++i) rounded[i] = static_cast<float>(c[i]);
      const auto ok = ref.check(rounded);
      CHECK(ok.ok);
      CHECK(ok.max_error <= ok.tolerance);
      rounded[5] *= 1.0001;
      const auto bad = ref.check(rounded);
      CHECK_FALSE(bad.ok);
      CHECK(bad.wrong == 1);
      CHECK_THAT(bad.message, Catch::Contains("exceeds tolerance"));
      check_nan_caught(ref, rounded, 5);
    }
  }
}

TEST_CASE("beta == 0 ignores C entirely", "[reference]") {
  Problem p;
  p.shape = Shape{2, 2, 2};
  p.beta = 0;
  auto in = make_inputs(p, 1);
  const Reference a(p, in);
  in.c.assign(in.c.size(), std::numeric_limits<double>::quiet_NaN());
  const Reference b(p, in);
  CHECK(a.expected() == b.expected());
  CHECK_FALSE(std::isnan(b.expected()(0, 0)));
}

TEST_CASE("a dropped term in a long reduction is caught", "[reference]") {
  Problem p;
  p.shape = Shape{2, 2, 4096};
  p.order = Order::kColMajor;
  const auto in = make_inputs(p, 3);
  const Reference ref(p, in);
  std::vector<double> c(4);
  for (int j = 0; j < 2; ++j) {
    for (int i = 0; i < 2; ++i) {
      float sum = 0;  // an FP32 accumulation, in order, like a kernel would do
      for (int k = 0; k < 4096; ++k) {
        sum += static_cast<float>(in.a[i + 2 * k]) * static_cast<float>(in.b[k + 4096 * j]);
      }
      c[i + 2 * j] = sum;
    }
  }
  CHECK(ref.check(c).ok);
  c[3] -= in.a[1 + 2 * 4095] * in.b[4095 + 4096 * 1];  // drop the last term of C(1,1)
  CHECK_FALSE(ref.check(c).ok);
}

TEST_CASE("large problems are checked on a sample of rows, every output for NaN", "[reference]") {
  Problem p;
  p.shape = Shape{2050, 300, 4096};  // 2.5e9 multiply-adds: above kFullCheckLimit
  p.order = Order::kColMajor;
  p.beta = 0.5;
  const auto in = make_inputs(p, 5);
  const Reference ref(p, in);
  REQUIRE(ref.sampled());
  const auto& rows = ref.rows();
  CHECK(std::is_sorted(rows.begin(), rows.end()));
  for (int64_t edge : {int64_t{0}, int64_t{1}, p.shape.m - 2, p.shape.m - 1}) {
    CHECK(std::binary_search(rows.begin(), rows.end(), edge));
  }
  // One checked row in every band, the last (partial) band included.
  for (int64_t first = 0; first < p.shape.m; first += kSampleBand) {
    INFO("band starting at row " << first);
    CHECK(std::lower_bound(rows.begin(), rows.end(), first) !=
          std::lower_bound(rows.begin(), rows.end(), first + kSampleBand));
  }
  CHECK(static_cast<int64_t>(rows.size()) <= p.shape.m / kSampleBand + 5);
  // The same rows for the same problem, whatever the data.
  CHECK(Reference(p, make_inputs(p, 6)).rows() == rows);

  // C with the reference's values in the checked rows and finite filler elsewhere passes.
  const int64_t m = p.shape.m, n = p.shape.n;
  std::vector<double> c(static_cast<size_t>(m * n), 1.0);
  for (size_t r = 0; r < rows.size(); ++r) {
    for (int64_t j = 0; j < n; ++j) {
      c[static_cast<size_t>(rows[r] + j * m)] = ref.expected()(static_cast<Eigen::Index>(r), j);
    }
  }
  const Verification ok = ref.check(c);
  CHECK(ok.ok);
  CHECK(ok.checked == static_cast<int64_t>(rows.size()) * n);

  // A wrong value in a checked row fails, naming the row; NaN fails anywhere.
  auto wrong = c;
  wrong[static_cast<size_t>(rows[7] + 9 * m)] *= 1.001;
  const Verification bad = ref.check(wrong);
  CHECK_FALSE(bad.ok);
  CHECK_THAT(bad.message, Catch::Contains("checked outputs") &&
                              Catch::Contains("C(" + std::to_string(rows[7]) + ",9)"));
  int64_t unchecked = 0;
  while (std::binary_search(rows.begin(), rows.end(), unchecked)) ++unchecked;
  check_nan_caught(ref, c, unchecked + 3 * m);
}

TEST_CASE("problems up to the limit are checked whole", "[reference]") {
  Problem p;
  p.shape = Shape{200, 3, 5};
  const auto in = make_inputs(p, 1);
  const Reference ref(p, in);
  CHECK_FALSE(ref.sampled());
  CHECK(static_cast<int64_t>(ref.rows().size()) == p.shape.m);
}

}  // namespace gemmtune_tests::src_verify_test_reference
