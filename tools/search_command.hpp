// SPDX-License-Identifier: Apache-2.0
// `gemmtune search`: its options (search_options.cpp) and the command that hands them to the
// search job (search/job/search_job.hpp) and prints what it reports (cmd_search.cpp).
#pragma once

#include <map>
#include <string>

#include <CLI/CLI.hpp>

#include "search/job/search_job.hpp"
#include "tools/common_options.hpp"

namespace gemmtune::cli {

// The options as parsed: the job's own, and the problem group as given.
struct SearchArgs {
  SearchJobOptions job;  // its problem, shapes and `given` are filled from the fields below
  ProblemOptions problem;
  bool json = false;
};

// The options given on the command line, by name: a resumed search takes from its journal the
// settings that were not given again.
using GivenOptions = std::map<std::string, CLI::Option*>;

void add_search_options(CLI::App& cmd, SearchArgs& a, GivenOptions& given);

}  // namespace gemmtune::cli
