// SPDX-License-Identifier: Apache-2.0
// The command-line front end (tools/app.cpp), apart from the subcommands' declarations so that
// tools/main.cpp includes nothing heavy.
#pragma once

namespace gemmtune::cli {

// Parses argv, runs the subcommand and returns the process's exit status.
int run_cli(int argc, char** argv);

}  // namespace gemmtune::cli
