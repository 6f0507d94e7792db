// SPDX-License-Identifier: Apache-2.0
#include <catch2/catch.hpp>

#include <nlohmann/json.hpp>

#include "src/core/result.hpp"

// The file's own namespace: the test files compile in unity batches.
namespace gemmtune_tests::src_core_test_result {

using namespace gemmtune;

TEST_CASE("a result carries the evaluating process's steps when they were recorded", "[result]") {
  Result r;
  r.config = {{"MWG", 64}};
  r.time.runs = 3;
  r.time.calls = 20;
  r.time.mean_ms = 0.5;
  // Results that did not record them (replays, recordings, older journals) write nothing new.
  CHECK_FALSE(nlohmann::json(r).contains("steps_ms"));
  CHECK_FALSE(nlohmann::json(r).get<Result>().steps.recorded());

  r.steps.program_ms = 4.5;
  r.steps.verify_ms = 6.25;
  r.steps.timing_ms = 31.0;
  const nlohmann::json j = r;
  CHECK(j["steps_ms"] == nlohmann::json{{"program", 4.5}, {"verify", 6.25}, {"timing", 31.0}});
  const Result back = j.get<Result>();
  CHECK(back.steps.program_ms == 4.5);
  CHECK(back.steps.verify_ms == 6.25);
  CHECK(back.steps.timing_ms == 31.0);
  CHECK(back.steps.recorded());
  // A step missing from the file reads as not recorded.
  nlohmann::json partial = j;
  partial["steps_ms"].erase("verify");
  CHECK(partial.get<Result>().steps.verify_ms == 0);
}

TEST_CASE("a result's measuring time counts every queued call of every sample", "[result]") {
  Result r;
  r.status = Status::kOk;
  r.time.runs = 3;
  r.time.mean_ms = 0.5;
  r.time.calls = 20;  // the GPU clock's samples: 20 calls queued behind the busy-wait kernel
  CHECK(r.measuring_ms() == Approx(30.0));
  r.time.calls = 0;  // recorded before the count existed: one call a sample
  CHECK(r.measuring_ms() == Approx(1.5));
  r.status = Status::kWrongResult;  // a failure measured nothing that counts
  CHECK(r.measuring_ms() == 0);
}

TEST_CASE("a result says how many of its samples were taken again and reads it back", "[result]") {
  Result r;
  r.time.runs = 5;
  CHECK_FALSE(nlohmann::json(r)["time"].contains("retaken_samples"));  // none: nothing written
  r.time.retaken_samples = 2;
  const nlohmann::json j = r;
  CHECK(j["time"]["retaken_samples"] == 2);
  CHECK(j.get<Result>().time.retaken_samples == 2);
}

}  // namespace gemmtune_tests::src_core_test_result
