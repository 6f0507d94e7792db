// SPDX-License-Identifier: Apache-2.0
// The checks a search makes before measuring: a resumed journal's problems, a recording's coverage
// and a problem's size against the device.
#include <catch2/catch.hpp>

#include "search/tuning/search_checks.hpp"
#include "src/core/error.hpp"

// The file's own namespace: the test files compile in unity batches.
namespace gemmtune_tests::search_tuning_test_search_checks {

using namespace gemmtune;

namespace {

Journal journal_with(const nlohmann::json& settings) {
  Journal j;
  j.headers.push_back({{"type", "header"}, {"settings", settings}});
  return j;
}

nlohmann::json settings(const std::string& kernel, const std::vector<std::string>& shapes) {
  return {{"kernel", kernel},  {"shapes", shapes},    {"layout", "NN"},  {"order", "row"},
          {"precision", "32"}, {"batch", 1},          {"epilogue", ""},  {"alpha", 1.0},
          {"beta", 0.0},       {"strategy", "bayes"}, {"max_evals", 100}};
}

}  // namespace

TEST_CASE("a resume names the problems its journal does not hold", "[search][resume]") {
  const auto j = journal_with(settings("xgemm", {"256x256x256", "128x128x128"}));
  CHECK(problems_not_in_journal(j, settings("xgemm", {"128x128x128"})).empty());
  const auto shape = problems_not_in_journal(j, settings("xgemm", {"64x64x64"}));
  REQUIRE(shape.size() == 1);
  CHECK_THAT(shape[0], Catch::Contains("64x64x64") && Catch::Contains("256x256x256"));
  const auto kernel = problems_not_in_journal(j, settings("xgemm_fast", {"256x256x256"}));
  REQUIRE(kernel.size() == 1);
  CHECK(kernel[0] == "kernel xgemm_fast (the journal's is xgemm)");
  // "fp32" and "32" are one precision.
  auto spelled = settings("xgemm", {"256x256x256"});
  spelled["precision"] = "fp32";
  CHECK(problems_not_in_journal(j, spelled).empty());
  // So are "row" and "row-major" (a journal keeps the spelling its search was given), but not
  // "row" and "col".
  spelled["order"] = "row-major";
  CHECK(problems_not_in_journal(j, spelled).empty());
  spelled["order"] = "col";
  CHECK(problems_not_in_journal(j, spelled).size() == 1);
  CHECK_THROWS_WITH(check_resume_problems("j.jsonl", j, settings("xgemm_fast", {"256x256x256"})),
                    Catch::Contains("--new-problems"));
  // A journal whose header predates settings cannot tell: nothing is refused.
  Journal old;
  old.headers.push_back({{"type", "header"}});
  CHECK(problems_not_in_journal(old, settings("xgemm_fast", {"1x1x1"})).empty());
}

TEST_CASE("a recording of part of a space is told apart from a whole one", "[search]") {
  auto s = settings("xgemm", {"256x256x256"});
  CHECK(partial_recording(journal_with(s)) ==
        std::string("a bayes search of at most 100 evaluations"));
  s["strategy"] = "exhaustive";
  s["max_evals"] = 0;
  CHECK_FALSE(partial_recording(journal_with(s)));
  s["time_budget_s"] = 60.0;
  CHECK(partial_recording(journal_with(s)));
  // A synthetic or older recording without settings is taken as whole.
  Journal bare;
  bare.headers.push_back({{"type", "header"}});
  CHECK_FALSE(partial_recording(bare));
}

TEST_CASE("a problem that cannot fit the device is refused with its sizes", "[search]") {
  Problem p;
  p.shape = {1 << 16, 1 << 16, 1 << 16};  // 16 GiB per operand in FP32
  const nlohmann::json device = {{"name", "small GPU"},
                                 {"global_mem_bytes", uint64_t{8} << 30},
                                 {"max_alloc_bytes", uint64_t{2} << 30}};
  try {
    check_fits_device(p, device);
    FAIL("not refused");
  } catch (const Error& e) {
    CHECK(e.code() == ErrorCode::kUnsupported);
    CHECK_THAT(e.what(), Catch::Contains("16.00 GiB for A") && Catch::Contains("small GPU") &&
                             Catch::Contains("8.00 GiB"));
  }
  p.shape = {1 << 14, 1 << 14, 1 << 14};  // 1 GiB per operand: fits 8 GiB, not a 512 MiB buffer
  CHECK_NOTHROW(check_fits_device(p, device));
  auto tight = device;
  tight["max_alloc_bytes"] = uint64_t{512} << 20;
  CHECK_THROWS_WITH(check_fits_device(p, tight), Catch::Contains("at most 0.50 GiB"));
  CHECK_NOTHROW(check_fits_device(p, nlohmann::json{{"name", "unknown limits"}}));
}

}  // namespace gemmtune_tests::search_tuning_test_search_checks
