// SPDX-License-Identifier: Apache-2.0
// Options and set-up shared by `gemmtune ab` and `gemmtune refine`: the problem, the evaluator (an
// OpenCL device or a replay file), the baseline source and the decision logs.
#pragma once

#include <memory>
#include <string>
#include <utility>
#include <vector>

#include <CLI/CLI.hpp>

#include "search/ab/ab_protocol.hpp"
#include "src/device/device_profile.hpp"
#include "src/eval/evaluator.hpp"
#include "src/kernel/kernel_spec.hpp"
#include "tools/common_options.hpp"

namespace gemmtune::cli {

struct AbCommandOptions {
  std::string baseline;  // "db:FILE", "journal:FILE" or a parameter string
  std::string kernel = "xgemm";
  ProblemOptions problem;  // the shape: -s/--shape or -m/-n/-k
  std::string device;
  std::string replay;  // answer from a recorded space instead of a device
  EvaluatorOptions eval;
  std::string threshold = "2%";
  int min_pairs = 5;
  int max_pairs = 20;
  std::string log;        // JSON lines, appended
  std::string changelog;  // Markdown
  bool json = false;
};

void add_ab_options(CLI::App& cmd, AbCommandOptions& o);

// "2%" or "0.02" as a fraction; throws Error naming the text otherwise.
double parse_threshold(const std::string& text);

// Everything a comparison needs, set up from the options.
struct AbSession {
  std::string kernel;  // the template compared
  Problem problem;
  std::unique_ptr<Evaluator> evaluator;
  const KernelSpec* spec = nullptr;
  DeviceLimits limits;
  Configuration baseline;
  std::string baseline_origin;  // where the baseline came from, in words
  AbSettings settings;
  IndicatorFunction indicators;  // the bottleneck report's items of each side
  // device, driver, evaluator and problem lines for the changelog header
  std::vector<std::pair<std::string, std::string>> header_fields;
  std::unique_ptr<MarkdownChangelog> changelog;
  std::unique_ptr<DecisionLog> log;

  AbSession();
  ~AbSession();
  AbSession(AbSession&&) noexcept;
  // Records a decision in the logs that were asked for.
  void record(const AbRecord& rec);

 private:
  std::unique_ptr<KernelSpec> owned_spec_;
  std::unique_ptr<ProfileSet> profiles_;
  friend AbSession open_ab_session(const GlobalOptions&, const AbCommandOptions&,
                                   const std::string&);
};

// Builds the problem, the evaluator and the baseline; opens the logs with `title` as the
// changelog's heading. Bad input throws Error naming it.
AbSession open_ab_session(const GlobalOptions& global, const AbCommandOptions& o,
                          const std::string& title);

// The command line of this process with the program name shortened to "gemmtune".
std::string command_line();

}  // namespace gemmtune::cli
