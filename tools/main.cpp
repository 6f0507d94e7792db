// gemmtune: the command-line front end. This file owns argument parsing, logging setup, error
// handling and exit codes; each subcommand lives in its own cmd_<verb>.cpp.
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
#include "tools/commands.hpp"

int main(int argc, char** argv) {
  using namespace gemmtune;
  CLI::App app{"gemmtune: an auto-tuner for OpenCL GEMM kernels"};
  app.set_version_flag("--version", std::string("gemmtune ") + version());
  app.require_subcommand(1);
  // Subcommands inherit this: an option they do not know goes to the main app, so the global
  // options (-v, --quiet, --log-level, --templates, --devices) may stand after the subcommand.
  app.fallthrough();
  cli::GlobalOptions options;
  cli::add_global_options(app, options);
  // Logging is set up before any subcommand callback runs.
  app.parse_complete_callback([&options]() { cli::apply_logging(options); });
  cli::set_devices_command(app, options);
  cli::set_space_command(app, options);
  cli::set_search_command(app, options);
  cli::set_search_eval_command(app, options);
  cli::set_worker_command(app, options);
  cli::set_db_command(app, options);
  cli::set_report_command(app, options);
  cli::set_export_command(app, options);
  cli::set_bench_command(app, options);
  cli::set_compare_command(app, options);
  cli::set_run_command(app, options);
  cli::set_bench_suite_command(app, options);
  cli::set_ab_command(app, options);
  cli::set_refine_command(app, options);
  cli::set_compile_command(app, options);
  cli::set_compile_worker_command(app, options);
  cli::set_rank_command(app, options);

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
  } catch (const cli::CheckFailed& e) {
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
