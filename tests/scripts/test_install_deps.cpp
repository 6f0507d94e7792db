// SPDX-License-Identifier: Apache-2.0
// scripts/install-deps.sh with stand-ins for dpkg-query, apt-get and sudo: each group asks apt
// for its own packages only (the quick start installs the plotting packages while the tool
// builds), a machine with everything installed runs no apt at all, and an unknown group is a
// one-line error.
#include <catch2/catch.hpp>

#include <sys/stat.h>

#include <filesystem>
#include <fstream>
#include <string>

#include "src/core/json_util.hpp"
#include "tests/test_support.hpp"

// The file's own namespace: the test files compile in unity batches.
namespace gemmtune_tests::scripts_test_install_deps {

using namespace gemmtune;

namespace {

// dpkg-query reports every package installed when FAKE_ALL_INSTALLED=1, else none.
const char* kFakeDpkgQuery = R"(#!/usr/bin/env bash
if [[ "${FAKE_ALL_INSTALLED:-0}" == 1 ]]; then printf 'install ok installed'; exit 0; fi
exit 1
)";
// apt-get logs its arguments, one call per line.
const char* kFakeAptGet = R"(#!/usr/bin/env bash
echo "$*" >> "$FAKE_APT_DIR/apt.txt"
)";
const char* kFakeSudo = R"(#!/usr/bin/env bash
exec "$@"
)";

// A run's exit code and output, and the fake apt-get's calls.
struct Run {
  test::CommandResult result;
  std::string apt_calls;
};

class FakeApt {
 public:
  FakeApt() : dir_(test::temp_dir("install-deps")) {
    std::filesystem::create_directories(dir_ + "/bin");
    write_tool("dpkg-query", kFakeDpkgQuery);
    write_tool("apt-get", kFakeAptGet);
    write_tool("sudo", kFakeSudo);
  }

  Run run(const std::string& env, const std::string& args) const {
    std::filesystem::remove(dir_ + "/apt.txt");
    Run r;
    r.result =
        test::run_command_in("", "PATH=" + dir_ + "/bin:$PATH FAKE_APT_DIR=" + dir_ + " " + env,
                             test::source_path("scripts/install-deps.sh") + " " + args);
    const std::string apt = dir_ + "/apt.txt";
    if (std::filesystem::exists(apt)) r.apt_calls = read_text_file(apt);
    return r;
  }

 private:
  void write_tool(const std::string& name, const char* text) const {
    const std::string path = dir_ + "/bin/" + name;
    std::ofstream(path) << text;
    ::chmod(path.c_str(), 0755);
  }

  std::string dir_;
};

// The `apt-get install` line of a run's calls.
std::string install_line(const std::string& calls) {
  const auto at = calls.find("install ");
  REQUIRE(at != std::string::npos);
  return calls.substr(at, calls.find('\n', at) - at) + " ";
}

bool asks_for(const std::string& line, const std::string& package) {
  return line.find(" " + package + " ") != std::string::npos;
}

}  // namespace

TEST_CASE("install-deps.sh installs the packages of the groups it is given", "[scripts]") {
  const FakeApt apt;

  SECTION("plots: python3 and matplotlib, nothing to build with") {
    const auto r = apt.run("", "plots");
    INFO(r.result.out << r.result.err);
    REQUIRE(r.result.exit_code == 0);
    const auto line = install_line(r.apt_calls);
    CHECK(asks_for(line, "python3-matplotlib"));
    CHECK(asks_for(line, "python3"));
    CHECK_FALSE(asks_for(line, "cmake"));
    CHECK_FALSE(asks_for(line, "catch2"));
  }
  SECTION("build: the compiler, the libraries and PoCL, no python") {
    const auto r = apt.run("", "build");
    INFO(r.result.out << r.result.err);
    REQUIRE(r.result.exit_code == 0);
    const auto line = install_line(r.apt_calls);
    for (const char* package : {"build-essential", "cmake", "ninja-build", "libeigen3-dev",
                                "pocl-opencl-icd", "libclblast-dev"}) {
      CHECK(asks_for(line, package));
    }
    CHECK_FALSE(asks_for(line, "python3-matplotlib"));
    CHECK_FALSE(asks_for(line, "clang-16"));
  }
  SECTION("GEMMTUNE_WITH_CLBLAST=0 leaves CLBlast out") {
    const auto r = apt.run("GEMMTUNE_WITH_CLBLAST=0", "build");
    REQUIRE(r.result.exit_code == 0);
    CHECK_FALSE(asks_for(install_line(r.apt_calls), "libclblast-dev"));
  }
  SECTION("--amd: every group and the AMD compiler") {
    const auto r = apt.run("", "--amd");
    REQUIRE(r.result.exit_code == 0);
    const auto line = install_line(r.apt_calls);
    for (const char* package : {"cmake", "python3-matplotlib", "catch2", "python3-pyopencl",
                                "mesa-opencl-icd", "libclc-15", "oclgrind", "clang-16", "lld-16",
                                "rocm-device-libs"}) {
      CHECK(asks_for(line, package));
    }
  }
  SECTION("with everything installed, apt is not run") {
    const auto r = apt.run("FAKE_ALL_INSTALLED=1", "--amd");
    REQUIRE(r.result.exit_code == 0);
    CHECK(r.result.out.find("all dependencies present") != std::string::npos);
    CHECK(r.apt_calls.empty());
  }
  SECTION("an unknown group is a one-line error") {
    const auto r = apt.run("", "build plot");
    CHECK(r.result.exit_code == 2);
    CHECK(r.result.err ==
          "install-deps: unknown group 'plot' (expected build, plots, tests, amd or "
          "--amd)\n");
    CHECK(r.apt_calls.empty());
  }
}

}  // namespace gemmtune_tests::scripts_test_install_deps
