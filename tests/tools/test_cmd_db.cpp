// SPDX-License-Identifier: Apache-2.0
#include <algorithm>
#include <fstream>

#include <catch2/catch.hpp>

#include "src/core/json_util.hpp"
#include "src/db/database.hpp"
#include "src/db/journal.hpp"
#include "tests/test_support.hpp"

// The file's own namespace: the test files compile in unity batches.
namespace gemmtune_tests::tools_test_cmd_db {

using namespace gemmtune;
using gemmtune::test::fast_64x64;
using gemmtune::test::run_gemmtune;
using gemmtune::test::source_path;
using gemmtune::test::temp_dir;

namespace {
const std::string kDb = source_path("tests/data/db_gfx1012.json");
}

TEST_CASE("db show prints a table or JSON", "[cli][database]") {
  auto r = run_gemmtune("db show " + kDb);
  INFO(r.err);
  REQUIRE(r.exit_code == 0);
  CHECK_THAT(r.out, Catch::Contains("gfx1012") && Catch::Contains("entries  4"));
  CHECK_THAT(r.out, Catch::Contains("4096x4096x4096") && Catch::Contains("3900.2"));
  r = run_gemmtune("db show --json " + kDb);
  REQUIRE(r.exit_code == 0);
  const auto j = nlohmann::json::parse(r.out);
  CHECK(j["entries"].size() == 4);
  CHECK(j["format"] == "gemmtune-database");
}

TEST_CASE("db merge keeps the fastest entry per problem", "[cli][database]") {
  const auto dir = temp_dir("db-merge");
  auto other = Database::load(kDb);
  auto faster = other.entries().at(0);
  faster.gflops = 9999;
  auto extra = other.entries().at(0);
  extra.key.shape = Shape{512, 512, 512};
  other.put(faster, true);
  other.put(extra, false);
  other.save(dir + "/other.json");
  const auto r = run_gemmtune("db merge " + dir + "/out.json " + kDb + " " + dir + "/other.json");
  INFO(r.err);
  REQUIRE(r.exit_code == 0);
  CHECK_THAT(r.out, Catch::Contains("5 entries from 9 entries in 2 databases"));
  const auto merged = Database::load(dir + "/out.json");
  CHECK(merged.entries().size() == 5);
  CHECK(merged.find(faster.key)->gflops == 9999);
  // Another device's database is refused.
  auto foreign = Database::load(kDb);
  foreign.device.name = "Other GPU";
  foreign.save(dir + "/foreign.json");
  const auto bad = run_gemmtune("db merge " + dir + "/x.json " + kDb + " " + dir + "/foreign.json");
  CHECK(bad.exit_code == 2);
  CHECK_THAT(bad.err, Catch::Contains("foreign.json") && Catch::Contains("Other GPU"));
}

TEST_CASE("db lookup gives the exact entry, else the selection model's choice", "[cli][database]") {
  auto r = run_gemmtune("db lookup " + kDb + " -m 4096 -n 4096 -k 4096");
  INFO(r.err);
  REQUIRE(r.exit_code == 0);
  CHECK_THAT(r.out, Catch::Contains("exact match") && Catch::Contains("MWG=128"));
  r = run_gemmtune("db lookup " + kDb + " -m 1000 -n 900 -k 1100 --json");
  REQUIRE(r.exit_code == 0);
  const auto j = nlohmann::json::parse(r.out);
  CHECK(j["match"] == "model");
  CHECK(j["source"] == "database");
  CHECK(j["entry"]["key"]["m"].get<int>() >= 128);
  CHECK(j["log_distance"].get<double>() > 0);
  CHECK(j["predicted_gflops"].get<double>() > 0);
  CHECK_THAT(j["reason"].get<std::string>(), Catch::Contains("predicted"));
  // Every NN candidate ranked, best first; the NT entry is of another family.
  REQUIRE(j["ranked"].size() == 3);
  CHECK(j["ranked"][0]["score"].get<double>() >= j["ranked"][1]["score"].get<double>());
  CHECK(j["ranked"][1]["score"].get<double>() >= j["ranked"][2]["score"].get<double>());
  CHECK(j["ranked"][0]["kernel"] == j["kernel"]);
  // The same answer every time.
  CHECK(run_gemmtune("db lookup " + kDb + " -m 1000 -n 900 -k 1100 --json").out == r.out);
  r = run_gemmtune("db lookup " + kDb + " -m 100 -n 100 -k 100");
  CHECK_THAT(r.out, Catch::Contains("no entry for 100x100x100; the model picks"));
  r = run_gemmtune("db lookup " + kDb + " -m 128 -n 128 -k 128 --kernel xgemm_direct");
  CHECK_THAT(r.out, Catch::Contains("exact match"));
  // No TT entry: the gfx1012 profile's configuration chosen offline, as the library would run.
  r = run_gemmtune("db lookup " + kDb + " -m 64 -n 64 -k 64 --layout TT");
  CHECK(r.exit_code == 0);
  CHECK_THAT(r.out, Catch::Contains("chosen offline for gfx1012, not measured"));
  // ... and for a kernel the profile chose nothing of, that template's defaults, as the library
  // would run them.
  r = run_gemmtune("db lookup " + kDb + " -m 64 -n 64 -k 64 --layout TT --kernel xgemm_direct");
  CHECK(r.exit_code == 0);
  CHECK_THAT(r.out, Catch::Contains("no entry for 64x64x64; template defaults of xgemm_direct"));
  CHECK(run_gemmtune("db lookup " + kDb + " -m 64 -n 64 -k 64 --layout XY").exit_code == 2);
}

TEST_CASE("db lookup relaxes the storage order and the epilogue as the library does",
          "[cli][database]") {
  // The row-major NT entry 2048^3 serves the column-major TN problem: the same kernel view.
  auto r =
      run_gemmtune("db lookup " + kDb + " -m 2048 -n 2048 -k 2048 --order col --layout TN --json");
  INFO(r.err);
  REQUIRE(r.exit_code == 0);
  auto j = nlohmann::json::parse(r.out);
  CHECK(j["match"] == "exact");
  CHECK(j["kernel"] == "xgemm_fast");
  CHECK(j["relaxed"] == "storage order");
  CHECK(j["entry"]["key"]["layout"] == "NT");
  r = run_gemmtune("db lookup " + kDb + " -m 1000 -n 900 -k 1100 --order col --explain");
  REQUIRE(r.exit_code == 0);
  CHECK_THAT(r.out,
             Catch::Contains("the model picks") && Catch::Contains("relaxed    storage order"));
  // With an epilogue: xgemm_fast's entry without one, the only template here that fuses it.
  r = run_gemmtune("db lookup " + kDb +
                   " -m 2048 -n 2048 -k 2048 --layout NT --epilogue bias,gelu");
  REQUIRE(r.exit_code == 0);
  CHECK_THAT(r.out, Catch::Contains("exact match xgemm_fast") &&
                        Catch::Contains("differs from the problem in: epilogue"));
  // The NN entries are xgemm's and xgemm_direct's, neither of which fuses one: passed over, and
  // the profile's offline choice, a configuration of the template that does, runs.
  r = run_gemmtune("db lookup " + kDb + " -m 4096 -n 4096 -k 4096 --epilogue relu --json");
  REQUIRE(r.exit_code == 0);
  j = nlohmann::json::parse(r.out);
  CHECK(j["match"] == "offline choice");  // the gfx1012 profile's
  CHECK(j["kernel"] == "xgemm_fast");
  CHECK_THAT(j["notes"].dump(), Catch::Contains("has no fused epilogue"));
}

TEST_CASE("db lookup --explain says what it chose, from where, how fast and why not the others",
          "[cli][database]") {
  const auto r = run_gemmtune("db lookup " + kDb + " -m 1000 -n 900 -k 1100 --explain");
  INFO(r.err);
  REQUIRE(r.exit_code == 0);
  CHECK_THAT(r.out, Catch::Contains("choice ") && Catch::Contains("source     database") &&
                        Catch::Contains("predicted  ") && Catch::Contains("GFLOPS") &&
                        Catch::Contains("why        predicted") && Catch::Contains("rejected   "));
  // Two alternatives rejected, each on its line with its own prediction.
  size_t rejected = 0;
  for (size_t at = r.out.find("(score "); at != std::string::npos;
       at = r.out.find("(score ", at + 1)) {
    ++rejected;
  }
  CHECK(rejected == 2);
}

TEST_CASE("db lookup takes the safe path where a baseline is predicted to win", "[cli][database]") {
  const auto dir = temp_dir("db-lookup-baseline");
  auto db = Database::load(kDb);
  for (auto e : db.entries()) {
    e.baseline = Baseline{1e6, "clblast"};  // far beyond any entry
    db.put(e, true);
  }
  db.save(dir + "/db.json");
  auto r = run_gemmtune("db lookup " + dir + "/db.json -m 1000 -n 900 -k 1100 --explain");
  INFO(r.err);
  REQUIRE(r.exit_code == 0);
  CHECK_THAT(r.out, Catch::Contains("safe path: xgemm_direct template defaults") &&
                        Catch::Contains("loses to the baseline") &&
                        Catch::Contains("baseline   ") && Catch::Contains("clblast measured"));
  r = run_gemmtune("db lookup " + dir + "/db.json -m 1000 -n 900 -k 1100 --json");
  const auto j = nlohmann::json::parse(r.out);
  CHECK(j["match"] == "safe path");
  CHECK(j["kernel"] == "xgemm_direct");
  CHECK(j["baseline"]["predicted_gflops"].get<double>() > 1000);
  // A tuned shape slower than its own baseline is not run either.
  r = run_gemmtune("db lookup " + dir + "/db.json -m 4096 -n 4096 -k 4096 --json");
  CHECK(nlohmann::json::parse(r.out)["match"] == "safe path");
  // Without baselines the same database's choice stands.
  r = run_gemmtune("db lookup " + kDb + " -m 4096 -n 4096 -k 4096 --json");
  CHECK(nlohmann::json::parse(r.out)["match"] == "exact");
}

namespace {

// DIR/db.json: an H200's database of one xgemm_fast entry at `shape`, its path.
std::string h200_database(const std::string& dir, Shape shape, const Configuration& parameters,
                          double gflops) {
  Database db;
  db.device.name = "NVIDIA H200";
  db.device.profile = "sm_90";
  DatabaseEntry e;
  e.key.kernel = "xgemm_fast";
  e.key.shape = shape;
  e.parameters = parameters;
  e.gflops = gflops;
  db.put(e, true);
  db.save(dir + "/db.json");
  return dir + "/db.json";
}

// `gemmtune db lookup DB SHAPE --json`, parsed.
nlohmann::json lookup_json(const std::string& db, const std::string& shape) {
  const auto r = run_gemmtune("db lookup " + db + " " + shape + " --json");
  INFO(r.err);
  REQUIRE(r.exit_code == 0);
  return nlohmann::json::parse(r.out);
}

}  // namespace

TEST_CASE("db lookup decides the aligned copies at the shape it serves", "[cli][database]") {
  // An H200's database measured at an aligned shape only, without copies (the value of ALDCOPY
  // never mattered there), looked up at shapes whose leading dimensions are no multiple of 4.
  const std::string db = h200_database(temp_dir("db-lookup-aligned-copies"), {2048, 2048, 2048},
                                       {{"GLV", 4},
                                        {"MWG", 128},
                                        {"NWG", 128},
                                        {"MDIMC", 16},
                                        {"NDIMC", 16},
                                        {"KWG", 8},
                                        {"VWM", 2},
                                        {"VWN", 8},
                                        {"LDS", 1},
                                        {"ALDCOPY", 0}},
                                       40000);
  auto lookup = [&](const std::string& shape) { return lookup_json(db, shape); };
  // Large: the copies cost a few percent of the kernel's time, so they run.
  auto j = lookup("-m 4491 -n 3219 -k 2127");
  CHECK(j["parameters"]["ALDCOPY"] == 1);
  CHECK_THAT(j["reason"].get<std::string>(), Catch::Contains("ALDCOPY=1"));
  // Small: they would cost more than the kernel itself.
  j = lookup("-m 71 -n 45 -k 39");
  CHECK(j["parameters"]["ALDCOPY"] == 0);
  // The measured shape runs as measured.
  CHECK(lookup("-m 2048 -n 2048 -k 2048")["parameters"]["ALDCOPY"] == 0);
}

TEST_CASE("db lookup gives producer rows where the launch leaves a compute unit few work-groups",
          "[cli][database]") {
  // An H200's database with one configuration without producer rows, looked up where its 64x64
  // tiles make 210 work-groups for the profile's 132 compute units, and where they make 1024.
  const std::string db = h200_database(temp_dir("db-lookup-producer-rows"), {724, 724, 256},
                                       fast_64x64({{"PREFETCH", 1}, {"STAGES", 1}}), 12000);
  auto lookup = [&](const std::string& shape) { return lookup_json(db, shape); };
  auto j = lookup("-m 929 -n 895 -k 187");
  CHECK(j["parameters"]["WSP"] == 8);
  CHECK(j["parameters"]["STAGES"] == 2);
  CHECK(j["parameters"]["PREFETCH"] == 0);
  CHECK_THAT(j["reason"].get<std::string>(),
             Catch::Contains("210 work-groups") && Catch::Contains("1.59 a compute unit"));
  j = lookup("-m 2048 -n 2048 -k 256");
  CHECK(j["parameters"]["WSP"] == 0);
  CHECK(j["parameters"]["PREFETCH"] == 1);
  // The measured shape runs as measured.
  CHECK(lookup("-m 724 -n 724 -k 256")["parameters"]["WSP"] == 0);
}

TEST_CASE("db lookup weighs the split of K at the shape it serves", "[cli][database]") {
  // An H200's database with one split-K configuration measured at 2048x256x2048 (8 parts, 1024
  // work-groups), looked up at 1590x223x1298: 100 tiles, where 8 parts leave the profile's 132
  // compute units a partial round of work-groups.
  const std::string db =
      h200_database(temp_dir("db-lookup-split-k"), {2048, 256, 2048},
                    fast_64x64({{"KWG", 8}, {"VWN", 8}, {"PREFETCH", 1}, {"SPLITK", 8}}), 31442);
  auto j = lookup_json(db, "-m 1590 -n 223 -k 1298");
  CHECK(j["parameters"]["SPLITK"] != 8);
  CHECK_THAT(j["reason"].get<std::string>(),
             Catch::Contains("(measured with 8)") && Catch::Contains("100 tiles"));
  // The measured shape runs as measured.
  CHECK(lookup_json(db, "-m 2048 -n 256 -k 2048")["parameters"]["SPLITK"] == 8);
}

TEST_CASE("db lookup takes candidates from search journals", "[cli][database]") {
  const auto dir = temp_dir("db-lookup-journal");
  const std::string journal = dir + "/search.jsonl";
  {
    JournalWriter w(journal, JournalOpen::kCreate);
    w.write_header({{"kernel", "xgemm"}});
    Problem p;
    p.shape = Shape{1000, 900, 1100};
    Result res;
    res.config = Database::load(kDb).entries().at(0).parameters;
    // A configuration of no entry that the template accepts (a stale one is passed over).
    res.config["NWG"] = 32;
    res.gflops = 50000;  // much faster than any entry, at the very shape asked
    res.time.median_ms = 0.04;
    w.append("xgemm", p, res, 1.0);
  }
  auto r = run_gemmtune("db lookup " + kDb + " -m 1000 -n 900 -k 1100 --json --journal " + journal);
  INFO(r.err);
  REQUIRE(r.exit_code == 0);
  auto j = nlohmann::json::parse(r.out);
  CHECK(j["source"] == "journal");
  CHECK(j["parameters"]["NWG"] == 32);
  CHECK(j["ranked"].size() == 4);
  // Bad input: one line, exit 2.
  r = run_gemmtune("db lookup " + kDb + " -m 10 -n 10 -k 10 --journal " + dir + "/none.jsonl");
  CHECK(r.exit_code == 2);
  r = run_gemmtune("db lookup " + kDb + " -m 10 -n 10 -k 10 --journal " + kDb);
  CHECK(r.exit_code == 2);
  CHECK(std::count(r.err.begin(), r.err.end(), '\n') == 1);
  r = run_gemmtune("db lookup " + kDb + " -m 10 -n 10 -k 10 --per-problem 0");
  CHECK(r.exit_code == 2);
}

TEST_CASE("db commands refuse corrupt and foreign files", "[cli][database]") {
  const auto dir = temp_dir("db-cli-bad");
  std::ofstream(dir + "/cut.json") << read_text_file(kDb).substr(0, 500);
  auto r = run_gemmtune("db show " + dir + "/cut.json");
  CHECK(r.exit_code == 2);
  CHECK_THAT(r.err,
             Catch::Contains("cut.json") && Catch::Contains("line") && Catch::Contains("column"));
  r = run_gemmtune("db show " + source_path("tests/data/clblast_tuner_xgemm_reference.json"));
  CHECK(r.exit_code == 2);
  CHECK_THAT(r.err, Catch::Contains("not a gemmtune database"));
  // The error is one line.
  CHECK(std::count(r.err.begin(), r.err.end(), '\n') == 1);
}

TEST_CASE("db show and lookup tell the two layouts of a batch apart", "[cli][database]") {
  const auto dir = temp_dir("db-batch-layout");
  auto db = Database::load(kDb);
  // xgemm_direct's entry: its template runs both layouts (xgemm's runs no offsets batch, so the
  // chooser passes its entries over for one, as the library does).
  auto strided = *std::find_if(db.entries().begin(), db.entries().end(),
                               [](const auto& e) { return e.key.kernel == "xgemm_direct"; });
  strided.key.batch = 64;
  strided.key.shape = Shape{256, 256, 256};
  strided.gflops = 111;
  auto offsets = strided;
  offsets.key.batch_layout = BatchLayout::kOffsets;
  offsets.gflops = 222;
  REQUIRE(db.put(strided, false) == PutOutcome::kAdded);
  REQUIRE(db.put(offsets, false) == PutOutcome::kAdded);
  db.save(dir + "/db.json");

  auto r = run_gemmtune("db show " + dir + "/db.json");
  REQUIRE(r.exit_code == 0);
  CHECK_THAT(r.out, Catch::Contains("64 strided") && Catch::Contains("64 offsets"));
  const std::string lookup = "db lookup " + dir + "/db.json -m 256 -n 256 -k 256 --batch 64 --json";
  r = run_gemmtune(lookup + " --kernel " + strided.key.kernel + " --batch-layout offsets");
  INFO(r.err);
  REQUIRE(r.exit_code == 0);
  CHECK(nlohmann::json::parse(r.out)["entry"]["gflops"] == 222);
  r = run_gemmtune(lookup + " --kernel " + strided.key.kernel);
  REQUIRE(r.exit_code == 0);
  CHECK(nlohmann::json::parse(r.out)["entry"]["gflops"] == 111);
  r = run_gemmtune(lookup + " --batch-layout pointers");
  CHECK(r.exit_code == 2);
  CHECK_THAT(r.err, Catch::Contains("pointers"));
}

TEST_CASE("db lookup: a kernel without a work-group tile is predicted only for skinny problems",
          "[db][cli][select]") {
  // One xgemm_skinny entry (1x4096x4096) and one xgemm_fast entry (512^3), measured on an H100.
  const std::string db = gemmtune::test::source_path("tests/data/select_skinny_db.json");
  auto r = gemmtune::test::run_gemmtune("db lookup " + db + " -m 2 -n 4096 -k 4096 --explain");
  INFO(r.err);
  REQUIRE(r.exit_code == 0);
  CHECK_THAT(r.out, Catch::Contains("choice     xgemm_skinny"));
  r = gemmtune::test::run_gemmtune("db lookup " + db + " -m 64 -n 64 -k 64 --explain");
  REQUIRE(r.exit_code == 0);
  CHECK_THAT(r.out, Catch::Contains("choice     xgemm_fast"));
  CHECK_THAT(r.out, Catch::Contains("passed over: its kernel has no work-group tile"));
}

}  // namespace gemmtune_tests::tools_test_cmd_db
