// SPDX-License-Identifier: Apache-2.0
// scripts/compare-splitk-launches.sh end to end on the test device: for a database's split-K
// entries that add their parts with the reduce kernel, both forms are run through `gemmtune run`,
// verified, and compared in a table (two launches against one, as `launches` says).
#include <catch2/catch.hpp>

#include <fstream>
#include <sstream>

#include "src/core/json_util.hpp"
#include "tests/test_support.hpp"

// The file's own namespace: the test files compile in unity batches.
namespace gemmtune_tests::scripts_test_compare_splitk_launches {

using namespace gemmtune;

namespace {

// A database of three FP32 xgemm_fast entries: two split K with the reduce kernel (compared), one
// does not split K (left out).
nlohmann::json database() {
  auto entry = [](int64_t m, int64_t n, int64_t k, int64_t splitk) {
    return nlohmann::json{{"key",
                           {{"kernel", "xgemm_fast"},
                            {"m", m},
                            {"n", n},
                            {"k", k},
                            {"batch", 1},
                            {"batch_layout", "strided"},
                            {"layout", "NN"},
                            {"order", "row"},
                            {"precision", "32"}}},
                          {"parameters",
                           {{"MWG", 32},
                            {"NWG", 32},
                            {"MDIMC", 8},
                            {"NDIMC", 8},
                            {"VWM", 2},
                            {"VWN", 2},
                            {"SPLITK", splitk},
                            {"KREDUCE", 0}}},
                          {"gflops", 1.0}};
  };
  return {{"entries", {entry(40, 48, 256, 4), entry(64, 32, 512, 2), entry(64, 64, 64, 1)}}};
}

}  // namespace

TEST_CASE("compare-splitk-launches times both forms of a database's split-K entries",
          "[scripts][device]") {
  if (!test::test_device().device) return test::unavailable("no OpenCL device");
  const std::string dir = test::temp_dir("compare-splitk");
  {
    std::ofstream db(dir + "/db.json");
    db << database().dump();
  }
  const auto r =
      test::run_command_in("", std::string("GEMMTUNE=") + GEMMTUNE_BINARY,
                           "bash " + test::source_path("scripts/compare-splitk-launches.sh") + " " +
                               dir + "/out " + dir + "/db.json");
  INFO(r.out << r.err);
  REQUIRE(r.exit_code == 0);
  // Two shapes, each form run twice (two rounds), every run verified.
  std::ifstream runs(dir + "/out/runs.jsonl");
  std::string line;
  int ok = 0, one = 0, two = 0;
  while (std::getline(runs, line)) {
    const auto j = nlohmann::json::parse(line)["result"];
    ok += j.value("status", "") == "ok";
    one += j.value("launches", 0) == 1;
    two += j.value("launches", 0) == 2;
  }
  CHECK(ok == 8);
  CHECK(one == 4);
  CHECK(two == 4);
  CHECK(r.out.find("| 40x48x256 | 4 |") != std::string::npos);
  CHECK(r.out.find("| 64x32x512 | 2 |") != std::string::npos);
  CHECK(r.out.find("64x64x64") == std::string::npos);
  CHECK(r.out.find("2 shapes: one launch runs at") != std::string::npos);
}

}  // namespace gemmtune_tests::scripts_test_compare_splitk_launches
