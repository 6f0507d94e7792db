// SPDX-License-Identifier: Apache-2.0
#include <catch2/catch.hpp>

#include "src/db/compare.hpp"
#include "src/core/error.hpp"
#include "tests/test_support.hpp"

// The file's own namespace: the test files compile in unity batches.
namespace gemmtune_tests::src_db_test_compare {

using namespace gemmtune;
using gemmtune::test::source_path;

namespace {

Database fixture() { return Database::load(source_path("tests/data/db_gfx1012.json")); }

// A copy of the fixture with one entry changed.
Database with_change(const std::function<void(DatabaseEntry&)>& change, size_t index) {
  auto db = fixture();
  auto e = db.entries().at(index);
  change(e);
  db.put(e, true);
  return db;
}

const CompareRow& row_of(const CompareReport& r, size_t index) { return r.rows.at(index); }

}  // namespace

TEST_CASE("threshold parsing", "[compare]") {
  CHECK(parse_threshold("3%") == Approx(0.03));
  CHECK(parse_threshold(" 2.5 % ") == Approx(0.025));
  CHECK(parse_threshold("0.05") == Approx(0.05));
  CHECK(parse_threshold("0") == 0);
  CHECK_THROWS_WITH(parse_threshold("3"), Catch::Contains("ambiguous"));
  CHECK_THROWS_AS(parse_threshold("abc"), Error);
  CHECK_THROWS_AS(parse_threshold("-1%"), Error);
  CHECK_THROWS_AS(parse_threshold(""), Error);
}

TEST_CASE("a database compared with itself passes", "[compare]") {
  const auto db = fixture();
  const auto r = compare_databases(db, db, CompareOptions{});
  CHECK(r.failures() == 0);
  REQUIRE(r.rows.size() == db.entries().size());
  for (const auto& row : r.rows) {
    CHECK(row.verdict == CompareVerdict::kSame);
    CHECK(row.ratio == 1.0);
  }
}

TEST_CASE("slowdowns are judged against threshold and noise", "[compare]") {
  const auto base = fixture();
  // Entry 0 (xgemm 1024) has cv 1 %: noise sqrt(2) %, allowed 3 % + 2 x 1.41 % = 5.83 %.
  REQUIRE(base.entries()[0].key.shape.m == 1024);
  REQUIRE(base.entries()[0].time.cv == Approx(0.01));
  auto slower = [&](double factor) {
    return with_change([&](DatabaseEntry& e) { e.gflops *= factor; }, 0);
  };
  auto r = compare_databases(base, slower(0.80), CompareOptions{});
  CHECK(row_of(r, 0).verdict == CompareVerdict::kRegression);
  CHECK(row_of(r, 0).ratio == Approx(0.8));
  CHECK(row_of(r, 0).allowed == Approx(0.03 + 2 * std::sqrt(2.0) * 0.01));
  CHECK(r.failures() == 1);
  r = compare_databases(base, slower(0.95), CompareOptions{});  // 5 % < 5.83 %
  CHECK(row_of(r, 0).verdict == CompareVerdict::kNoise);
  CHECK(r.failures() == 0);
  r = compare_databases(base, slower(0.99), CompareOptions{});
  CHECK(row_of(r, 0).verdict == CompareVerdict::kSame);
  r = compare_databases(base, slower(1.20), CompareOptions{});
  CHECK(row_of(r, 0).verdict == CompareVerdict::kFaster);
  CompareOptions strict;
  strict.threshold = 0;
  strict.noise_sigmas = 0;
  r = compare_databases(base, slower(0.99), strict);
  CHECK(row_of(r, 0).verdict == CompareVerdict::kRegression);
  // A noisy measurement widens what counts as noise.
  auto noisy = with_change(
      [](DatabaseEntry& e) {
        e.gflops *= 0.85;
        e.time.cv = 0.10;
      },
      0);
  r = compare_databases(base, noisy, CompareOptions{});
  CHECK(row_of(r, 0).verdict == CompareVerdict::kNoise);
}

TEST_CASE("failed, missing and new entries", "[compare]") {
  const auto base = fixture();
  auto failed = with_change(
      [](DatabaseEntry& e) {
        e.status = Status::kWrongResult;
        e.message = "max error 3";
      },
      1);
  auto r = compare_databases(base, failed, CompareOptions{});
  CHECK(row_of(r, 1).verdict == CompareVerdict::kFailed);
  CHECK_THAT(row_of(r, 1).note, Catch::Contains("wrong_result"));
  CHECK(r.failures() == 1);

  auto missing = fixture();
  REQUIRE(missing.erase(base.entries()[2].key));
  r = compare_databases(base, missing, CompareOptions{});
  CHECK(row_of(r, 2).verdict == CompareVerdict::kMissing);
  CHECK(r.failures() == 1);
  // The other way round the extra entry is only reported.
  r = compare_databases(missing, base, CompareOptions{});
  CHECK(r.failures() == 0);
  CHECK(r.rows.back().verdict == CompareVerdict::kNew);
}

TEST_CASE("compare renders table, Markdown, JUnit and JSON", "[compare]") {
  const auto base = fixture();
  auto now = with_change([](DatabaseEntry& e) { e.gflops *= 0.5; }, 3);
  auto r = compare_databases(base, now, CompareOptions{});
  r.base_name = "base.json";
  r.new_name = "new <run>.json";
  CHECK_THAT(to_table(r), Catch::Contains("REGRESSION") && Catch::Contains("1 failing"));
  CHECK_THAT(to_markdown(r), Catch::Contains("| **REGRESSION** |"));
  const std::string xml = to_junit(r);
  CHECK_THAT(xml, Catch::Contains("tests=\"4\" failures=\"1\""));
  CHECK_THAT(xml, Catch::Contains("<failure message=\"REGRESSION: 50.0 % slower"));
  CHECK(xml.find("<run>") == std::string::npos);
  const nlohmann::json j = r;
  CHECK(j["failures"] == 1);
  CHECK(j["rows"][3]["verdict"] == "REGRESSION");
  CHECK(j["rows"][3]["ratio"] == Approx(0.5));
}

}  // namespace gemmtune_tests::src_db_test_compare
