// SPDX-License-Identifier: Apache-2.0
// gemmtune: the command-line tool. The front end is tools/app.cpp (in the cli library); exit codes
// are listed there.
#include "tools/app.hpp"

int main(int argc, char** argv) {
  return gemmtune::cli::run_cli(argc, argv);
}
