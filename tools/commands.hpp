// SPDX-License-Identifier: Apache-2.0
// One function per subcommand; each lives in its own cmd_<verb>.cpp.
#pragma once

#include <stdexcept>

#include <CLI/CLI.hpp>

#include "tools/common_options.hpp"

namespace gemmtune::cli {

// A command that ran to its end but whose check failed (a regression, a wrong result, a kernel
// that does not build): main prints the message on one line and exits 1. Commands never call
// exit themselves; bad input and device failures are gemmtune::Error, mapped by main too.
class CheckFailed : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

void set_devices_command(CLI::App& app, GlobalOptions& options);
void set_space_command(CLI::App& app, GlobalOptions& options);
void set_db_command(CLI::App& app, GlobalOptions& options);
void set_report_command(CLI::App& app, GlobalOptions& options);
void set_export_command(CLI::App& app, GlobalOptions& options);
void set_bench_command(CLI::App& app, GlobalOptions& options);
void set_compare_command(CLI::App& app, GlobalOptions& options);
void set_run_command(CLI::App& app, GlobalOptions& options);
void set_bench_suite_command(CLI::App& app, GlobalOptions& options);
void set_ab_command(CLI::App& app, GlobalOptions& options);
void set_refine_command(CLI::App& app, GlobalOptions& options);
void set_search_command(CLI::App& app, GlobalOptions& options);
void set_search_eval_command(CLI::App& app, GlobalOptions& options);
void set_worker_command(CLI::App& app, GlobalOptions& options);
void set_compile_command(CLI::App& app, GlobalOptions& options);
void set_compile_worker_command(CLI::App& app, GlobalOptions& options);
void set_rank_command(CLI::App& app, GlobalOptions& options);

}  // namespace gemmtune::cli
