// SPDX-License-Identifier: Apache-2.0
// The evaluation cache repairs itself: a file left empty (what a full disk leaves), cut short or
// with a damaged line is rewritten with its header and the records it still holds, so that later
// searches take their results from it again instead of never again.
#include <catch2/catch.hpp>

#include <filesystem>
#include <string>

#include "src/core/json_util.hpp"
#include "tests/tools/cli_helpers.hpp"

// The file's own namespace: the test files compile in unity batches.
namespace gemmtune_tests::tools_test_cmd_search_cache_repair {

using namespace gemmtune;
using test::run_gemmtune_in;
using test::write_text;

namespace {

namespace fs = std::filesystem;

// The one file of the evaluation cache in `dir`.
std::string cache_file(const std::string& dir) {
  std::string found;
  for (const auto& e : fs::directory_iterator(dir)) {
    if (e.path().extension() == ".jsonl") {
      REQUIRE(found.empty());
      found = e.path().string();
    }
  }
  REQUIRE(!found.empty());
  return found;
}

}  // namespace

TEST_CASE("the evaluation cache recovers from an empty or damaged file", "[search][cli][cache]") {
  if (!test::cli_has_device()) return test::unavailable("no OpenCL device");
  const std::string dir = test::temp_dir("cache-repair");
  const std::string evaluations = dir + "/evaluations";
  const std::string env =
      "GEMMTUNE_EVALUATION_CACHE=" + evaluations + " XDG_CACHE_HOME=" + dir + "/cache";
  int run = 0;
  // A search of one shape; returns its results entry.
  auto search = [&]() {
    const std::string out = dir + "/r" + std::to_string(++run) + ".json";
    const auto r = run_gemmtune_in(dir, env,
                                   "search --kernel xgemm -s 24x24x24 --strategy random --seed 3 "
                                   "--max-evals 3 --no-db -o " +
                                       out);
    INFO(r.err);
    REQUIRE(r.exit_code == 0);
    return std::make_pair(read_json_file(out)["results"].at(0), r.err);
  };
  REQUIRE(search().first["measured"] == 3);
  const std::string file = cache_file(evaluations);

  // Empty: measured again, and the file gets its header back.
  write_text(file, "");
  auto [result, log] = search();
  CHECK(result["cached"] == 0);
  const std::string text = read_text_file(file);
  CHECK(text.rfind("{\"identity\":", 0) == 0);
  CHECK(search().first["cached"] == 3);

  // A damaged line after the header and the last record cut short: the other records are kept.
  const size_t header_end = text.find('\n') + 1;
  std::string damaged = read_text_file(file);
  damaged.insert(header_end, "{\"type\": \"result\", oops\n");
  damaged.resize(damaged.size() - 10);
  write_text(file, damaged);
  std::tie(result, log) = search();
  CHECK(result["cached"] == 2);
  CHECK_THAT(log, Catch::Contains("rewritten"));
  CHECK(search().first["cached"] == 3);
}

}  // namespace gemmtune_tests::tools_test_cmd_search_cache_repair
