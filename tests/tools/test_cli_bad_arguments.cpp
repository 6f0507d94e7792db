// SPDX-License-Identifier: Apache-2.0
// Bad arguments through the gemmtune binary: each is one line naming the option, the value or the
// shape, exit 2, said once however many configurations it concerns; the offline AMD commands
// check their options alike, and a variable naming an unusable AMD tool is named with its value.
#include <catch2/catch.hpp>

#include <string>
#include <vector>

#include "tests/tools/cli_helpers.hpp"

// The file's own namespace: the test files compile in unity batches.
namespace gemmtune_tests::tools_test_cli_bad_arguments {

using namespace gemmtune;
using test::line_count;
using test::run_gemmtune;
using test::run_gemmtune_in;

namespace {

// `args` refused as bad input: exit 2, one line, holding each of `parts`.
void check_refused(const std::string& args, const std::vector<std::string>& parts,
                   const std::string& env = "") {
  INFO(env << " gemmtune " << args);
  const auto r = run_gemmtune_in("", env, args);
  INFO(r.err);
  CHECK(r.exit_code == 2);
  CHECK(line_count(r.err) == 1);
  CHECK(r.out.empty());
  for (const auto& p : parts) CHECK_THAT(r.err, Catch::Contains(p));
}

}  // namespace

TEST_CASE("space --target checks its options as compile does and says each thing once",
          "[cli][offline]") {
  // A wave size the ISA does not run, and a template gemmtune does not build itself.
  for (const std::string& command : {"space", "compile"}) {
    check_refused(command + " --target gfx906 --wavefront 32 --cache-dir none",
                  {"gfx906 runs no wave32"});
    check_refused(command + " --kernel clblast-xgemm --target gfx906 --cache-dir none",
                  {"clblast-xgemm is CLBlast's own kernel", "no source here to build offline"});
  }
  // Without -q: not one warning per configuration either.
  const auto r = run_gemmtune("space --target gfx906 --wavefront 32 --cache-dir none");
  CHECK(r.exit_code == 2);
  CHECK(line_count(r.err) == 1);
}

TEST_CASE("space --target checks --check against the target's limits", "[cli][offline]") {
  check_refused("space --target gfx906 --check MWG=banana", {"MWG", "'banana'"});
  check_refused("space --target gfx906 --check MWG=7", {"not valid on gfx906", "MWG=7"});
  const auto r = run_gemmtune("space --target gfx906 --check MWG=64");
  CHECK(r.exit_code == 0);
  CHECK_THAT(r.out, Catch::StartsWith("valid on gfx906: ") && Catch::Contains("MWG=64"));
}

TEST_CASE("an empty --target and an empty parameter item are refused", "[cli][offline]") {
  for (const std::string& command : {"compile", "space", "run"}) {
    check_refused(command + " --target ''", {"--target", "empty"});
  }
  for (const std::string& params : {"MWG=64,,", "MWG=64,", ",MWG=64", "MWG=64;;NWG=64"}) {
    check_refused("compile --target gfx906 --cache-dir none --params '" + params + "'",
                  {"'" + params + "'", "empty item"});
    check_refused("space --check '" + params + "'", {"empty item"});
  }
}

TEST_CASE("a shape beyond the kernels' 32-bit indices is refused by every command that takes one",
          "[cli]") {
  const std::string big = "100000x100000x8";
  const std::vector<std::string> commands = {
      "space --target gfx906 -s " + big,
      "db lookup " + test::kDb + " -m 100000 -n 100000 -k 8",
      "run -m 100000 -n 100000 -k 8",
      "search -s 64," + big + " --no-db --max-evals 1",
      // Within range alone, beyond it as a batch of 200 in one buffer.
      "db lookup " + test::kDb + " -m 4096 -n 4096 -k 64 --batch 200",
  };
  for (const auto& c : commands) check_refused(c, {"has matrices of more than 2^31 elements"});
  check_refused("space --target gfx906 -s " + big, {big});
}

TEST_CASE("a variable naming an unusable AMD tool is named with its value", "[cli][offline]") {
  const std::string compile = "compile --target gfx906 --cache-dir none";
  for (const std::string& variable :
       {"GEMMTUNE_AMD_CLANG", "GEMMTUNE_AMD_LLD", "GEMMTUNE_AMD_OBJDUMP"}) {
    check_refused(compile, {variable + "=/nonexistent", "is no executable"},
                  variable + "=/nonexistent");
  }
  check_refused(compile, {"GEMMTUNE_AMD_CLANG=/bin/true", "no clang >= 16"},
                "GEMMTUNE_AMD_CLANG=/bin/true");
  const std::string empty = test::temp_dir("no-bitcode");
  for (const std::string& folder : {std::string("/nonexistent"), empty}) {
    check_refused(compile, {"GEMMTUNE_AMD_BITCODE=" + folder, "no folder of ROCm device libraries"},
                  "GEMMTUNE_AMD_BITCODE=" + folder);
  }
}

}  // namespace gemmtune_tests::tools_test_cli_bad_arguments
