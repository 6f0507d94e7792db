// SPDX-License-Identifier: Apache-2.0
// scripts/ptx-launch.py: the PTX of a gemmtune binary cache file, with OpenCL's environment
// registers rewritten for a CUDA launch; scripts/cublas-kernels.py's argument check.
#include <catch2/catch.hpp>

#include <filesystem>
#include <fstream>
#include <sstream>

#include "src/core/json_util.hpp"
#include "tests/test_support.hpp"

// The file's own namespace: the test files compile in unity batches.
namespace gemmtune_tests::scripts_test_ptx_launch {

using namespace gemmtune;

namespace {

test::CommandResult ptx_launch(const std::string& args) {
  return test::run_command_in("", "",
                              "python3 " + test::source_path("scripts/ptx-launch.py") + " " + args);
}

std::string read_all(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

// A cache file in the binary cache's layout: one JSON line, the build log, the binary.
void write_cache_file(const std::string& path, const std::string& log, const std::string& binary) {
  const nlohmann::json header = {
      {"magic", "gemmtune-binary-cache 1"},
      {"identity", "device=X\noptions=-DMWG=64 -DPRECISION=32 -DTRANSA=0 -DTRANSB=0"},
      {"log_bytes", log.size()},
      {"binary_bytes", binary.size()}};
  std::ofstream(path, std::ios::binary) << header.dump() << "\n" << log << binary;
}

}  // namespace

TEST_CASE("ptx-launch writes the PTX of a cache file with the launch registers rewritten",
          "[scripts]") {
  const std::string dir = test::temp_dir("ptx-launch");
  // The group offset reads %envreg0 and the group count %envreg7 in NVIDIA's OpenCL PTX.
  const std::string ptx = ".version 9.0\nmov.b32 %r1, %envreg0;\nmov.b32 %r2, %envreg7;\n";
  write_cache_file(dir + "/k.bin", "ptxas info : Used 120 registers\n", ptx);
  auto r = ptx_launch("--binary " + dir + "/k.bin --write-ptx " + dir + "/k.ptx");
  INFO(r.out << r.err);
  REQUIRE(r.exit_code == 0);
  const std::string out = read_all(dir + "/k.ptx");
  CHECK(out.rfind(".version 9.0\n", 0) == 0);  // the log is not part of the PTX
  CHECK(out.find("mov.b32 %r1, 0;") != std::string::npos);
  CHECK(out.find("mov.b32 %r2, %nctaid.y;") != std::string::npos);
  CHECK(out.find("envreg") == std::string::npos);

  // One it cannot set is refused.
  write_cache_file(dir + "/k9.bin", "", ".version 9.0\nmov.b32 %r1, %envreg9;\n");
  r = ptx_launch("--binary " + dir + "/k9.bin --write-ptx " + dir + "/k9.ptx");
  CHECK(r.exit_code != 0);
  CHECK(r.err.find("environment registers it cannot set") != std::string::npos);
}

TEST_CASE("ptx-launch refuses what is no cache file and a launch without its shape", "[scripts]") {
  const std::string dir = test::temp_dir("ptx-launch-bad");
  std::ofstream(dir + "/plain.bin") << "not a cache file\n";
  auto r = ptx_launch("--binary " + dir + "/plain.bin --write-ptx " + dir + "/x.ptx");
  CHECK(r.exit_code != 0);
  CHECK(r.err.find("is no gemmtune binary cache file") != std::string::npos);
  CHECK_FALSE(std::filesystem::exists(dir + "/x.ptx"));

  // A header whose sizes do not add up to the file's is refused too.
  write_cache_file(dir + "/short.bin", "log", ".version 9.0\n");
  std::ofstream(dir + "/short.bin", std::ios::app) << "trailing";
  r = ptx_launch("--binary " + dir + "/short.bin --write-ptx " + dir + "/x.ptx");
  CHECK(r.exit_code != 0);

  write_cache_file(dir + "/k.bin", "", ".version 9.0\n");
  r = ptx_launch("--binary " + dir + "/k.bin -m 64");
  CHECK(r.exit_code != 0);
  CHECK(r.err.find("give -m, -n and -k") != std::string::npos);
}

TEST_CASE("ptx-launch reads the cache file gemmtune run writes", "[scripts]") {
  const std::string dir = test::temp_dir("ptx-launch-run");
  const auto run = test::run_gemmtune(
      "run --kernel xgemm_fast -p MWG=16,NWG=16,MDIMC=4,NDIMC=4,KWG=8,VWM=1,VWN=1 -m 20 -n 20 "
      "-k 20 --cache-dir " +
      dir + "/cache");
  INFO(run.out << run.err);
  REQUIRE(run.exit_code == 0);
  std::string bin;
  for (const auto& e : std::filesystem::directory_iterator(dir + "/cache/kernels")) {
    if (e.path().extension() == ".bin") bin = e.path().string();
  }
  REQUIRE_FALSE(bin.empty());
  const auto r = ptx_launch("--binary " + bin + " --write-ptx " + dir + "/k.out");
  INFO(r.out << r.err);
  CHECK(r.exit_code == 0);
  // The binary as the header counts it (PoCL's drivers store none: 0 bytes).
  std::ifstream in(bin);
  std::string header;
  std::getline(in, header);
  const auto bytes = nlohmann::json::parse(header).at("binary_bytes").get<uintmax_t>();
  CHECK(std::filesystem::file_size(dir + "/k.out") == bytes);
}

TEST_CASE("cublas-kernels names a bad shape in one line", "[scripts]") {
  const auto r = test::run_command_in(
      "", "", "python3 " + test::source_path("scripts/cublas-kernels.py") + " --shapes 64x0x8");
  CHECK(r.exit_code != 0);
  CHECK(r.err.find("cublas-kernels: bad shape '64x0x8'") != std::string::npos);
}

}  // namespace gemmtune_tests::scripts_test_ptx_launch
