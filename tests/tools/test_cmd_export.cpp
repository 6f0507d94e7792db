#include <filesystem>
#include <sstream>

#include <catch2/catch.hpp>

#include "src/core/json_util.hpp"
#include "tests/test_support.hpp"

using gemmtune::read_text_file;
using gemmtune::test::run_gemmtune;
using gemmtune::test::source_path;
using gemmtune::test::temp_dir;

namespace {
const std::string kDb = source_path("tests/data/db_gfx1012.json");
}

TEST_CASE("export writes every format", "[cli][export]") {
  const auto dir = temp_dir("export-cli");
  auto r = run_gemmtune("export " + kDb + " --format csv");
  INFO(r.err);
  REQUIRE(r.exit_code == 0);
  CHECK_THAT(r.out, Catch::StartsWith("device,kernel,precision"));
  r = run_gemmtune("export " + kDb + " --format c-header -o " + dir + "/tuned.h");
  REQUIRE(r.exit_code == 0);
  CHECK_THAT(read_text_file(dir + "/tuned.h"), Catch::Contains("gemmtune_find"));
  r = run_gemmtune("export " + kDb + " -f clblast-override");
  REQUIRE(r.exit_code == 0);
  CHECK_THAT(r.out, Catch::Contains("clblast::OverrideParameters(device, \"Xgemm\""));
  // What was left out is said on stderr, not mixed into the output.
  CHECK_THAT(r.err, Catch::Contains("PADA, PADB") && Catch::Contains("xgemm_fast"));
  CHECK(r.out.find("xgemm_fast") == std::string::npos);
  // clblast-json: one file per entry into a folder, or one entry selected to stdout.
  r = run_gemmtune("export " + kDb + " --format clblast-json -o " + dir + "/clblast/");
  REQUIRE(r.exit_code == 0);
  int files = 0;
  for (const auto& f : std::filesystem::directory_iterator(dir + "/clblast")) {
    ++files;
    const auto j = nlohmann::json::parse(read_text_file(f.path().string()));
    CHECK(j.contains("kernel_family"));
  }
  CHECK(files == 3);
  r = run_gemmtune("export " + kDb + " --format clblast-json --kernel xgemm_direct");
  REQUIRE(r.exit_code == 0);
  CHECK(nlohmann::json::parse(r.out)["best_kernel"] == "XgemmDirect");
}

TEST_CASE("export refuses what it cannot do", "[cli][export]") {
  auto r = run_gemmtune("export " + kDb + " --format clblast-json");
  CHECK(r.exit_code == 2);
  CHECK_THAT(r.err, Catch::Contains("-o FOLDER"));
  r = run_gemmtune("export " + kDb + " --format yaml");
  CHECK(r.exit_code == 2);
  CHECK_THAT(r.err, Catch::Contains("yaml"));
  r = run_gemmtune("export " + kDb + " --format clblast-json --kernel xgemm_fast");
  CHECK(r.exit_code == 2);
  CHECK_THAT(r.err, Catch::Contains("no entry can be exported"));
}

TEST_CASE("export names the register cap of an H100 database's capped entries",
          "[cli][export][regcap]") {
  // tests/data/db_h100_regcap.json, a copy of an H100 database: entries tuned with REGCAP=128 and
  // 96 and uncapped ones (REGCAP=0) under the sm_90 profile, whose register-cap option the C
  // header must carry for the capped entries only.
  const auto r = run_gemmtune("export " + source_path("tests/data/db_h100_regcap.json") +
                              " -f c-header --kernel xgemm_fast");
  REQUIRE(r.exit_code == 0);
  CHECK_THAT(r.out, Catch::Contains("-DREGCAP=96 -DSPLITK=4") &&
                        Catch::Contains("-cl-nv-maxrregcount=96\"") &&
                        Catch::Contains("-cl-nv-maxrregcount=128\""));
  std::istringstream lines(r.out);
  int uncapped = 0;
  for (std::string line; std::getline(lines, line);) {
    if (line.find("-DREGCAP=0 ") == std::string::npos) continue;
    ++uncapped;
    CHECK(line.find("maxrregcount") == std::string::npos);
  }
  CHECK(uncapped >= 2);
}
