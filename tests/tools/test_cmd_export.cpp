// SPDX-License-Identifier: Apache-2.0
#include <filesystem>
#include <sstream>

#include <catch2/catch.hpp>

#include "src/core/json_util.hpp"
#include "src/db/database.hpp"
#include "tests/test_support.hpp"

// The file's own namespace: the test files compile in unity batches.
namespace gemmtune_tests::tools_test_cmd_export {

using gemmtune::read_text_file;
using gemmtune::test::run_gemmtune;
using gemmtune::test::source_path;
using gemmtune::test::temp_dir;

namespace {
const std::string kDb = source_path("tests/data/db_gfx1012.json");

// What the C++ compiler reads in a header of `export --format embed`: the arguments of its
// GEMMTUNE_EMBED_DATABASE(...) before the JSON, and the JSON, the concatenation of its raw
// string literals (R"delimiter(...)delimiter").
struct Embedded {
  std::string arguments, json, delimiter;
};
Embedded read_embedded(const std::string& header) {
  Embedded out;
  const std::string call = "\nGEMMTUNE_EMBED_DATABASE(";
  const size_t at = header.find(call);
  REQUIRE(at != std::string::npos);
  size_t pos = header.find("\nR\"", at);
  REQUIRE(pos != std::string::npos);
  out.arguments = header.substr(at + call.size(), pos - at - call.size());
  while (header.compare(pos, 3, "\nR\"") == 0) {
    const size_t open = header.find('(', pos);
    const std::string delimiter = header.substr(pos + 3, open - pos - 3);
    CHECK((out.delimiter.empty() || out.delimiter == delimiter));
    out.delimiter = delimiter;
    const size_t close = header.find(")" + delimiter + "\"", open);
    REQUIRE(close != std::string::npos);
    out.json += header.substr(open + 1, close - open - 1);
    pos = close + delimiter.size() + 2;
  }
  CHECK(header.substr(pos) == "\n)\n");
  return out;
}
}  // namespace

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

TEST_CASE("export --format embed writes the database as a header that round-trips",
          "[cli][export][embed]") {
  const auto dir = temp_dir("export-embed");
  auto r = run_gemmtune("export " + kDb + " --format embed -o " + dir + "/db.hpp");
  INFO(r.err);
  REQUIRE(r.exit_code == 0);
  const std::string header = read_text_file(dir + "/db.hpp");
  const auto db = gemmtune::Database::load(kDb);
  CHECK_THAT(header, Catch::Contains("#ifndef GEMMTUNE_EMBED_DATABASE\n#error") &&
                         Catch::Contains("-DGEMMTUNE_EMBED_DATABASES="));
  const Embedded e = read_embedded(header);
  CHECK(e.arguments == "\"db_gfx1012.json\", \"" + db.device.name + "\", \"" + db.device.profile +
                           "\", " + std::to_string(db.entries().size()) + ",");
  CHECK(e.delimiter == "gemmtune_db");
  CHECK(nlohmann::json::parse(e.json) == db.to_json());
  // The same on stdout.
  r = run_gemmtune("export " + kDb + " -f embed");
  REQUIRE(r.exit_code == 0);
  CHECK(r.out == header);

  // A database string that would close the literal early gets another delimiter.
  auto j = nlohmann::json::parse(read_text_file(kDb));
  j["device"]["name"] = "clash )gemmtune_db";
  const std::string clash = dir + "/clash.json";
  gemmtune::write_json_atomic(clash, j);
  r = run_gemmtune("export " + clash + " -f embed");
  REQUIRE(r.exit_code == 0);
  const Embedded c = read_embedded(r.out);
  CHECK(c.delimiter != "gemmtune_db");
  CHECK(nlohmann::json::parse(c.json)["device"]["name"] == "clash )gemmtune_db");
  CHECK_THAT(c.arguments, Catch::Contains("\"clash )gemmtune_db\""));
}

}  // namespace gemmtune_tests::tools_test_cmd_export
