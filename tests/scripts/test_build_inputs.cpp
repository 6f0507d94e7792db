// SPDX-License-Identifier: Apache-2.0
// What a build compiles into libgemmtune depends only on the commit: a copy of the checkout runs a
// plain `gemmtune search` and the quick start's tuning command (both write their databases where
// the user runs them), and a fresh configure of that copy still ships exactly the databases of
// results/databases/, which git ignores none of and the outputs never touch.
#include <catch2/catch.hpp>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include "src/core/json_util.hpp"
#include "src/db/database.hpp"
#include "tests/test_support.hpp"

// The file's own namespace: the test files compile in unity batches.
namespace gemmtune_tests::scripts_test_build_inputs {

using namespace gemmtune;
namespace fs = std::filesystem;

namespace {

// The files of the checkout as a clean clone has them: tracked and not ignored, copied to `to`.
void copy_checkout(const std::string& to) {
  const auto listed = test::run_command_in(test::source_path(""), "",
                                           "git ls-files -co --exclude-standard -z | "
                                           "xargs -0 cp --parents -t '" +
                                               to + "'");
  REQUIRE(listed.exit_code == 0);
}

// The databases a configure of `source` embeds, relative to `source`, sorted.
std::vector<std::string> embedded_databases(const std::string& source, const std::string& build) {
  const auto configured =
      test::run_command_in(source, "", "cmake -S . -B '" + build + "' -DGEMMTUNE_BUILD_TESTS=OFF");
  INFO(configured.out << configured.err);
  REQUIRE(configured.exit_code == 0);
  std::vector<std::string> out;
  std::istringstream list(read_text_file(build + "/api/embedded_files.txt"));
  for (std::string line; std::getline(list, line);) {
    // group|name|path
    if (line.rfind("databases|", 0) != 0) continue;
    const std::string path = line.substr(line.rfind('|') + 1);
    out.push_back(fs::relative(path, source).string());
  }
  std::sort(out.begin(), out.end());
  return out;
}

std::vector<std::string> files_of(const std::string& root, const std::string& folder) {
  std::vector<std::string> out;
  for (const auto& e : fs::directory_iterator(root + "/" + folder)) {
    out.push_back(fs::relative(e.path(), root).string());
  }
  std::sort(out.begin(), out.end());
  return out;
}

}  // namespace

TEST_CASE("databases written by search and the quick start are never compiled in",
          "[scripts][build]") {
  const auto& td = test::test_device();
  if (!td.device) return test::unavailable("no OpenCL device");
  const std::string copy = test::temp_dir("build-inputs") + "/checkout";
  fs::create_directories(copy);
  copy_checkout(copy);
  const auto shipped = files_of(copy, "results/databases");
  REQUIRE_FALSE(shipped.empty());
  CHECK(embedded_databases(copy, copy + "/build-before") == shipped);

  // A plain search, and the quick start's tuning command, run from the checkout as users do.
  const std::string budget = "--shapes 32x32x32 --kernel xgemm_direct --max-evals 1 --seed 1";
  const auto plain = test::run_gemmtune_in(copy, "", "-q search " + budget);
  INFO(plain.err);
  REQUIRE(plain.exit_code == 0);
  const auto quick =
      test::run_gemmtune_in(copy, "",
                            "-q search " + budget +
                                " --db gemmtune-results/quickstart/tuned.json --output "
                                "gemmtune-results/quickstart/search.json");
  INFO(quick.err);
  REQUIRE(quick.exit_code == 0);
  CHECK(fs::exists(copy + "/gemmtune-results/quickstart/tuned.json"));
  const std::string written = Database::default_path(td.device->info);  // relative
  CHECK(fs::exists(copy + "/" + written));

  // Nothing new where the build reads, and git sees nothing to commit.
  CHECK(files_of(copy, "results/databases") == shipped);
  CHECK(embedded_databases(copy, copy + "/build-after") == shipped);
  for (const std::string& output :
       {std::string("gemmtune-results/quickstart/tuned.json"), written}) {
    const auto ignored =
        test::run_command_in(test::source_path(""), "", "git check-ignore -q '" + output + "'");
    INFO(output << ": " << ignored.err);
    CHECK(ignored.exit_code == 0);
  }
}

}  // namespace gemmtune_tests::scripts_test_build_inputs
