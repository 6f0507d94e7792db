// SPDX-License-Identifier: Apache-2.0
// Random suite shapes (a fixed generator) and the summary of a report's ratios.
#include <catch2/catch.hpp>

#include <cmath>
#include <random>

#include "src/bench/bench_suite.hpp"
#include "src/core/error.hpp"

// The file's own namespace: the test files compile in unity batches.
namespace gemmtune_tests::src_bench_test_suite_random {

using namespace gemmtune;

namespace {

std::string joined(const std::vector<Shape>& shapes) {
  std::string out;
  for (const auto& s : shapes) out += (out.empty() ? "" : ",") + s.to_string();
  return out;
}

SuiteRow row_with(Shape shape, std::optional<double> ratio, std::optional<double> cublas) {
  SuiteRow r;
  r.shape = shape;
  r.ratio = ratio;
  r.cublas_ratio = cublas;
  return r;
}

}  // namespace

TEST_CASE("random suite shapes are the documented generator's, the same for a seed",
          "[bench_suite][random]") {
  // The standard fixes mt19937_64's output: the 10000th number of the default seed.
  std::mt19937_64 engine;
  engine.discard(9999);
  REQUIRE(engine() == 9981545732273789042ULL);
  // Expected values from an independent implementation (MT19937-64 written out in Python from
  // the published algorithm, and the draw of bench_suite.hpp).
  CHECK(joined(random_suite_shapes({6, 7, 32, 8192})) ==
        "2098x6185x61,4499x70x43,3236x4724x133,1714x2114x872,289x177x3230,172x7980x7909");
  CHECK(joined(random_suite_shapes({4, 1, 1, 46340})) == "4x4x127,1x43x17879,157x2x455,920x2x393");
  // A longer list starts with the shorter one; another seed gives other shapes.
  const auto ten = random_suite_shapes({10, 7, 32, 8192});
  CHECK(joined({ten.begin(), ten.begin() + 6}) == joined(random_suite_shapes({6, 7, 32, 8192})));
  CHECK(joined(random_suite_shapes({6, 8, 32, 8192})) !=
        joined(random_suite_shapes({6, 7, 32, 8192})));
  // Every dimension within the range; log-uniform: about as many below the geometric middle
  // (512 for 32..8192) as above it.
  const auto many = random_suite_shapes({400, 3, 32, 8192});
  int below = 0;
  for (const auto& s : many) {
    for (int64_t d : {s.m, s.n, s.k}) {
      CHECK(d >= 32);
      CHECK(d <= 8192);
      below += d < 512;
    }
  }
  CHECK(below > 540);  // 600 expected of 1200
  CHECK(below < 660);
  // A one-value range.
  CHECK(joined(random_suite_shapes({2, 5, 64, 64})) == "64x64x64,64x64x64");
}

TEST_CASE("random suite shapes refuse bad counts and ranges", "[bench_suite][random]") {
  CHECK_THROWS_AS(random_suite_shapes({0, 1, 32, 8192}), Error);
  CHECK_THROWS_AS(random_suite_shapes({5, 1, 0, 8192}), Error);
  CHECK_THROWS_AS(random_suite_shapes({5, 1, 100, 99}), Error);
  CHECK_THROWS_WITH(random_suite_shapes({5, 1, 32, 46341}), Catch::Contains("46340"));
}

TEST_CASE("the summary is the geometric mean and the worst ratio of each side",
          "[bench_suite][random]") {
  SuiteReport r;
  r.rows.push_back(row_with({64, 64, 64}, 2.0, 0.5));
  r.rows.push_back(row_with({128, 64, 64}, 0.5, std::nullopt));
  r.rows.push_back(row_with({256, 64, 64}, 4.0, 0.25));
  r.rows.push_back(row_with({512, 64, 64}, std::nullopt, std::nullopt));  // a side n/a
  const RatioSummary c = summarize_ratios(r, Peer::kCLBlast);
  CHECK(c.rows == 3);
  CHECK(c.geomean == Approx(std::cbrt(2.0 * 0.5 * 4.0)));
  CHECK(c.worst == 0.5);
  CHECK(c.worst_row == "128x64x64 fp32");
  const RatioSummary b = summarize_ratios(r, Peer::kCublas);
  CHECK(b.rows == 2);
  CHECK(b.geomean == Approx(std::sqrt(0.5 * 0.25)));
  CHECK(b.worst == 0.25);
  CHECK(b.worst_row == "256x64x64 fp32");

  const auto lines = suite_summary_lines(r);
  REQUIRE(lines.size() == 2);
  CHECK_THAT(lines[0], Catch::Contains("CLBlast") && Catch::Contains("1.587") &&
                           Catch::Contains("worst 0.500 (128x64x64 fp32)") &&
                           Catch::Contains("over 3 rows"));
  CHECK_THAT(lines[1], Catch::Contains("cuBLAS") && Catch::Contains("0.354"));
  CHECK_THAT(suite_text(r), Catch::Contains("geometric mean 1.587"));
  CHECK_THAT(suite_markdown(r), Catch::Contains("## Summary"));
  const nlohmann::json j = r;
  CHECK(j["summary"]["clblast"]["worst"] == 0.5);
  CHECK(j["summary"]["cublas"]["rows"] == 2);

  // No row with both sides: said, not divided by zero.
  SuiteReport none;
  none.rows.push_back(row_with({64, 64, 64}, std::nullopt, std::nullopt));
  CHECK(summarize_ratios(none, Peer::kCLBlast).rows == 0);
  CHECK_THAT(suite_summary_lines(none).at(0), Catch::Contains("no row"));
}

}  // namespace gemmtune_tests::src_bench_test_suite_random
