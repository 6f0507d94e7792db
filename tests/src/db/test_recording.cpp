// SPDX-License-Identifier: Apache-2.0
// Other tools' recordings read as journals: Kernel Tuner cache files (whole, cut short, gzipped)
// and T4 results, failures kept with their class; T4 written back reads the same.
#include <catch2/catch.hpp>

#include <map>

#include "src/core/error.hpp"
#include "src/core/json_util.hpp"
#include "src/db/recording.hpp"
#include "tests/test_support.hpp"

#ifdef GEMMTUNE_HAVE_ZLIB
#include <zlib.h>
#endif

// The file's own namespace: the test files compile in unity batches.
namespace gemmtune_tests::src_db_test_recording {

using namespace gemmtune;

namespace {

const std::string kCache = test::source_path("tests/data/kernel_tuner_cache_small.json");
const std::string kT4 = test::source_path("tests/data/t4_results_small.json");

std::map<Status, int> statuses(const Journal& j) {
  std::map<Status, int> out;
  for (const auto& e : j.entries) ++out[e.result.status];
  return out;
}

// A copy of `text` written to `dir`/`name`.
std::string write_copy(const std::string& dir, const std::string& name, const std::string& text) {
  const std::string path = dir + "/" + name;
  write_file_atomic(path, text);
  return path;
}

}  // namespace

TEST_CASE("a Kernel Tuner cache file reads as a journal with failures classed", "[db][recording]") {
  const Journal j = read_recording(kCache);
  REQUIRE(j.entries.size() == 48);
  const auto s = statuses(j);
  CHECK(s.at(Status::kCompileFailed) == 4);  // WG 64 with VEC 4
  CHECK(s.at(Status::kRunFailed) == 2);      // WG 8, VEC 4, column layout
  CHECK(s.at(Status::kInvalid) == 2);        // WG 64 unrolled in column layout, VEC 1 and 2
  CHECK(s.at(Status::kOk) == 40);
  const Problem& p = j.entries.front().problem;
  CHECK(j.entries.front().kernel == "example_gemm");
  // The problem size names M and N; K follows from the recorded rate and time.
  CHECK(p.shape == Shape{64, 64, 64});
  CHECK(j.headers.front()["device"]["name"] == "Example GPU");
  // Booleans are 0/1, a string parameter is coded by its position in tune_params.
  const Result& first = j.entries.front().result;
  CHECK(first.config == Configuration{{"WG", 8}, {"VEC", 1}, {"UNROLL", 0}, {"LAYOUT", 0}});
  CHECK(j.entries[1].result.config.at("LAYOUT") == 1);
  // The median of the recorded repetitions, not their mean.
  CHECK(first.time.median_ms == Approx(0.52));
  CHECK(first.time.runs == 3);
  CHECK(first.compile_ms == 128.0);
}

TEST_CASE("a Kernel Tuner cache cut short is read up to its last whole entry", "[db][recording]") {
  const std::string dir = test::temp_dir("kt-cut");
  const std::string text = read_text_file(kCache);
  const size_t cache_start = text.find("\"cache\"");
  REQUIRE(cache_start != std::string::npos);
  // Cut inside every entry line (a third of the way in) and right after each entry's brace.
  size_t line_start = text.find('\n', cache_start) + 1;
  int whole = 0;
  while (true) {
    const size_t line_end = text.find('\n', line_start);
    if (line_end == std::string::npos || text[line_start] == '}') break;
    const size_t mid = line_start + (line_end - line_start) / 3;
    if (whole > 0) {
      INFO("cut inside entry " << whole + 1);
      const auto j = read_recording(write_copy(dir, "mid.json", text.substr(0, mid)));
      CHECK(j.entries.size() == size_t(whole));
    }
    ++whole;
    const size_t brace = text.rfind('}', line_end);
    INFO("cut after entry " << whole);
    const auto j = read_recording(write_copy(dir, "end.json", text.substr(0, brace + 1)));
    CHECK(j.entries.size() == size_t(whole));
    line_start = line_end + 1;
  }
  CHECK(whole == 48);
  // Cut before any entry is whole: nothing to read, said plainly.
  const std::string before = text.substr(0, text.find('\n', cache_start) + 20);
  CHECK_THROWS_WITH(read_recording(write_copy(dir, "none.json", before)),
                    Catch::Contains("none.json") && Catch::Contains("ends early"));
}

TEST_CASE("a damaged Kernel Tuner cache names the file and the entry", "[db][recording]") {
  const std::string dir = test::temp_dir("kt-bad");
  std::string text = read_text_file(kCache);
  const std::string failure = "\"CompilationFailedConfig\"";
  std::string unknown = text;
  unknown.replace(unknown.find(failure), failure.size(), "\"SomethingElse\"");
  const auto bad = write_copy(dir, "unknown.json", unknown);
  CHECK_THROWS_WITH(read_recording(bad),
                    Catch::Contains("unknown.json: cache entry \"64,4,False,row\"") &&
                        Catch::Contains("SomethingElse"));
  // Damage in the middle is not a file cut short: the line is named, nothing is guessed.
  std::string middle = text;
  middle.insert(middle.find("\"8,2,"), "@");
  CHECK_THROWS_WITH(read_recording(write_copy(dir, "middle.json", middle)),
                    Catch::Contains("middle.json: line 13: not valid JSON"));
  try {
    read_recording(bad);
  } catch (const Error& e) {
    CHECK(e.code() == ErrorCode::kInvalidFile);
  }
}

TEST_CASE("T4 results read as a journal with their invalidity as the status", "[db][recording]") {
  const Journal j = read_recording(kT4);
  REQUIRE(j.entries.size() == 16);
  const auto s = statuses(j);
  CHECK(s.at(Status::kOk) == 10);
  CHECK(s.at(Status::kInvalid) == 3);  // constraints: 64x8, 128x4 and 128x8 exceed 256
  CHECK(s.at(Status::kCompileFailed) == 1);
  CHECK(s.at(Status::kRunFailed) == 1);
  CHECK(s.at(Status::kTimeout) == 1);
  const Result& r = j.entries[5].result;  // 32x2
  CHECK(r.config == Configuration{{"block_size_x", 32}, {"block_size_y", 2}, {"use_shared", 0}});
  CHECK(r.ok());
  CHECK(r.time.median_ms == Approx(1.5));
  CHECK(r.compile_ms == 250.0);
}

TEST_CASE("T4 written from a journal reads back the same results", "[db][recording]") {
  const Journal original = read_recording(kCache);
  const std::string dir = test::temp_dir("t4-round");
  const auto path = write_copy(dir, "t4.json", t4_results(t4_records(original)).dump());
  const Journal back = read_recording(path);
  REQUIRE(back.entries.size() == original.entries.size());
  for (size_t i = 0; i < back.entries.size(); ++i) {
    const auto &a = original.entries[i], &b = back.entries[i];
    INFO(to_string(a.result.config));
    CHECK(b.kernel == a.kernel);
    CHECK(b.problem.shape == a.problem.shape);
    CHECK(b.result.config == a.result.config);
    CHECK(b.result.time.median_ms == Approx(a.result.time.median_ms));
    CHECK(b.result.compile_ms == a.result.compile_ms);
    // A class holds several statuses; the first of each is the one read back, as here.
    CHECK(b.result.status == a.result.status);
  }
}

#ifdef GEMMTUNE_HAVE_ZLIB
TEST_CASE("a gzipped Kernel Tuner cache, whole or cut short, reads like the plain one",
          "[db][recording]") {
  const std::string dir = test::temp_dir("kt-gz");
  const std::string text = read_text_file(kCache);
  const std::string gz = dir + "/cache.json.gz";
  gzFile f = gzopen(gz.c_str(), "wb");
  REQUIRE(f);
  gzwrite(f, text.data(), unsigned(text.size()));
  gzclose(f);
  CHECK(read_recording(gz).entries.size() == 48);
  // The compressed bytes cut in half: the entries inflated before the cut are kept.
  const std::string bytes = read_text_file(gz);
  const auto cut =
      read_recording(write_copy(dir, "cut.json.gz", bytes.substr(0, bytes.size() / 2)));
  CHECK(cut.entries.size() > 0);
  CHECK(cut.entries.size() < 48);
}
#endif

}  // namespace gemmtune_tests::src_db_test_recording
