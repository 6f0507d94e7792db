// Helpers of the command-line tests: whether OpenCL lists a device, and a recorded space to
// replay.
#pragma once

#include <algorithm>
#include <functional>
#include <string>

#include <nlohmann/json.hpp>

#include "src/db/journal.hpp"
#include "tests/search/strategies/synthetic_space.hpp"
#include "tests/test_support.hpp"

namespace gemmtune::test {

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

// A replay file in `dir`: the synthetic journal of the xgemm cpu space at 256x256x256 (seed 5),
// each recorded result passed through `change` when given.
inline std::string write_synthetic_replay(const std::string& dir,
                                          const std::function<Result(const Result&)>& change = {}) {
  static const KernelSpec spec = KernelSpec::load(source_path("kernel_templates/xgemm.json"));
  const ParamSpace space(spec, "cpu", DeviceLimits{}, Context{{"ELEM_BYTES", 4}});
  Problem p;
  p.shape = {256, 256, 256};
  const Journal j = synthetic_gemm_journal(space, p, 5);
  const std::string path = dir + "/replay.jsonl";
  JournalWriter w(path);
  w.write_header(j.headers.front());
  for (const auto& e : j.entries) w.append(e.problem, change ? change(e.result) : e.result, 0);
  return path;
}

}  // namespace gemmtune::test
