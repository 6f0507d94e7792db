// SPDX-License-Identifier: Apache-2.0
// Helpers of the command-line tests: whether OpenCL lists a device, recorded spaces to replay,
// the test database and edited copies of it.
#pragma once

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <functional>
#include <string>
#include <vector>

#include <catch2/catch.hpp>
#include <nlohmann/json.hpp>

#include "src/core/json_util.hpp"
#include "src/db/journal.hpp"
#include "src/kernel/kernel_spec.hpp"
#include "tests/search/strategies/synthetic_space.hpp"
#include "tests/test_support.hpp"

namespace gemmtune::test {

// One small configuration of each of gemmtune's templates (16 work-items or fewer), an odd problem
// for it, with transposes, column-major storage, beta and split-K among them: what runs on every
// OpenCL driver, the ones whose kernels allow only 32 work-items (Mesa's rusticl on a CPU)
// included, and quickly under a simulator.
struct SmallCase {
  const char* kernel;
  const char* params;
  const char* problem;
};
inline constexpr SmallCase kSmallCases[] = {
    {"xgemm", "MWG=16,NWG=16,KWG=16,MDIMC=4,NDIMC=4,MDIMA=4,NDIMB=4",
     "-m 19 -n 13 -k 21 --layout TN --order col --beta 0.5"},
    {"xgemm_direct", "WGD=16,MDIMCD=4,NDIMCD=4,MDIMAD=4,NDIMBD=4",
     "-m 19 -n 13 -k 7 --layout NT --beta 0.5"},
    {"xgemm_fast", "MWG=16,NWG=16,MDIMC=4,NDIMC=4,SPLITK=2",
     "-m 17 -n 18 -k 40 --layout TT --order col --beta 1"},
    {"xgemm_skinny", "WGJ=4,WGK=4,SPLITK=2", "-m 3 -n 37 -k 64 --layout NT --beta 0.5"},
};

// The lines of a command's output: an error is one line.
inline int line_count(const std::string& s) {
  return static_cast<int>(std::count(s.begin(), s.end(), '\n'));
}

// Whether `gemmtune devices` lists a device (asked once per test process).
inline bool cli_has_device() {
  static const bool yes = [] {
    const auto r = run_gemmtune("devices --json");
    return r.exit_code == 0 && !nlohmann::json::parse(r.out).empty();
  }();
  return yes;
}

// Problems in every storage order and transpose, with partial tiles, alpha, beta and a batch:
// the `gemmtune run` arguments the xgemm_fast feature tests verify each form on, besides their
// own.
inline std::vector<std::string> fast_run_problems(const std::vector<std::string>& own) {
  std::vector<std::string> problems = {
      "-m 67 -n 45 -k 133 --order row --layout NN --beta 0",
      "-m 37 -n 29 -k 301 --order col --layout TT --alpha 2 --beta -1",
      "-m 45 -n 70 -k 99 --order row --layout NT --beta 0.5 --batch 3"};
  problems.insert(problems.end(), own.begin(), own.end());
  return problems;
}

// One call of `kernel` with `params` on `problem` through `gemmtune run`, checked to succeed and
// to agree with the reference; its JSON result. verified_fast_run: the same for xgemm_fast.
inline nlohmann::json verified_kernel_run(const std::string& kernel, const std::string& params,
                                          const std::string& problem) {
  const auto r = run_gemmtune("run --kernel " + kernel + " --params " + params + " " + problem +
                              " --min-runs 1 --min-time-ms 0 --warmup 0 --cache-dir none --json");
  INFO(kernel << " " << params << " " << problem << ": " << r.err);
  REQUIRE(r.exit_code == 0);
  const auto j = nlohmann::json::parse(r.out);
  CHECK(j["status"] == "ok");
  CHECK(j["max_error"].get<double>() <= j["tolerance"].get<double>());
  return j;
}

inline nlohmann::json verified_fast_run(const std::string& params, const std::string& problem) {
  return verified_kernel_run("xgemm_fast", params, problem);
}

inline const std::string kDb = source_path("tests/data/db_gfx1012.json");

inline bool exists(const std::string& path) {
  return std::filesystem::exists(path);
}

inline void write_text(const std::string& path, const std::string& text) {
  std::ofstream(path, std::ios::binary) << text;
}

// A replay file `dir`/`name`: synthetic recordings of the xgemm cpu space (seed 5), one problem
// per shape, each recorded result passed through `change` when given.
inline std::string write_replay(const std::string& dir,
                                const std::vector<Shape>& shapes = {{256, 256, 256}},
                                const std::function<Result(const Result&)>& change = {},
                                const std::string& name = "replay.jsonl") {
  static const KernelSpec spec = KernelSpec::load(source_path("kernel_templates/xgemm.json"));
  const ParamSpace space(spec, "cpu", DeviceLimits{}, Context{{"ELEM_BYTES", 4}});
  const std::string path = dir + "/" + name;
  JournalWriter w(path);
  bool header = false;
  for (const auto& shape : shapes) {
    Problem p;
    p.shape = shape;
    const Journal j = synthetic_gemm_journal(space, p, 5);
    if (!header) w.write_header(j.headers.front());
    header = true;
    for (const auto& e : j.entries)
      w.append(e.kernel, e.problem, change ? change(e.result) : e.result, 0);
  }
  return path;
}

// A copy of the test database with `edit` applied to its JSON.
template <typename Edit>
std::string db_copy(const std::string& dir, const std::string& name, Edit edit) {
  auto j = read_json_file(kDb);
  edit(j);
  const std::string path = dir + "/" + name;
  write_text(path, j.dump(2));
  return path;
}

}  // namespace gemmtune::test
