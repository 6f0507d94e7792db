// SPDX-License-Identifier: Apache-2.0
// The command-line front end: argument parsing, logging setup, error handling and exit codes;
// each subcommand lives in its own cmd_<verb>.cpp. tools/main.cpp only calls run_cli, so that the
// executable's own file compiles in a moment.
//
// Exit codes (gemmtune::exit_status): 0 success; 1 a check failed (e.g. a regression found by
// compare); 2 bad input (arguments, files); 3 device or OpenCL failure; 4 internal error; 5 busy;
// 128 + signal when a search was interrupted.
#include <iostream>

#include <spdlog/spdlog.h>

#include "src/core/error.hpp"
#include "src/core/logging.hpp"
#include "src/core/version.hpp"
#include "src/device/opencl.hpp"
#include "tools/app.hpp"
#include "tools/commands.hpp"

namespace gemmtune::cli {

int run_cli(int argc, char** argv) {
  CLI::App app{"gemmtune: an auto-tuner for OpenCL GEMM kernels"};
  app.set_version_flag("--version", std::string("gemmtune ") + version());
  app.require_subcommand(1);
  // Subcommands inherit this: an option they do not know goes to the main app, so the global
  // options (-v, --quiet, --log-level, --templates, --devices) may stand after the subcommand.
  app.fallthrough();
  GlobalOptions options;
  add_global_options(app, options);
  // Logging is set up before any subcommand callback runs.
  app.parse_complete_callback([&options]() { apply_logging(options); });
  set_devices_command(app, options);
  set_space_command(app, options);
  set_search_command(app, options);
  set_search_eval_command(app, options);
  set_worker_command(app, options);
  set_db_command(app, options);
  set_report_command(app, options);
  set_export_command(app, options);
  set_bench_command(app, options);
  set_compare_command(app, options);
  set_run_command(app, options);
  set_bench_suite_command(app, options);
  set_ab_command(app, options);
  set_refine_command(app, options);
  set_compile_command(app, options);
  set_compile_worker_command(app, options);
  set_rank_command(app, options);

  try {
    setup_logging("info");
    app.parse(argc, argv);
    return 0;
  } catch (const CLI::ParseError& e) {
    // --help and --version are "errors" with exit code 0 in CLI11.
    if (e.get_exit_code() == 0) return app.exit(e);
    if (app.get_subcommands().empty() && !app.remaining().empty()) {
      std::cerr << "gemmtune: unknown subcommand '" << app.remaining().front()
                << "' (see gemmtune --help)\n";
      return 2;
    }
    std::cerr << "gemmtune: " << e.what() << " (see gemmtune --help)\n";
    return 2;
  } catch (const CheckFailed& e) {
    std::cerr << "gemmtune: check failed: " << e.what() << "\n";
    return 1;
  } catch (const Error& e) {
    std::cerr << "gemmtune: error: " << e.what() << "\n";
    return exit_status(e);
  } catch (const cl::Error& e) {
    std::cerr << "gemmtune: OpenCL error: " << e.what() << " " << cl_error_name(e.err()) << "\n";
    return 3;
  } catch (const std::exception& e) {
    std::cerr << "gemmtune: internal error: " << e.what() << "\n";
    return 4;
  }
}

}  // namespace gemmtune::cli
