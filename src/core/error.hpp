// SPDX-License-Identifier: Apache-2.0
// Error type of the gemmtune library: one category per kind of failure, so that the CLI can map
// each to an exit code and print a single line naming what was wrong.
#pragma once

#include <stdexcept>
#include <string>

namespace gemmtune {

enum class ErrorCode {
  kInvalidArgument,  // bad user input: a flag value, a selector, a parameter string
  kInvalidFile,      // a file that is missing, corrupt or of the wrong kind
  kDevice,           // OpenCL device or platform problem
  kUnsupported,      // the device cannot do what was asked (missing extension)
  kInternal,         // a bug in gemmtune
  kCheckFailed,      // the command ran but its check failed (a search found nothing valid)
  kBusy,             // another gemmtune process holds a file this one must own (a journal)
  kInterrupted,      // stopped by SIGINT or SIGTERM after saving what was measured
};

class Error : public std::runtime_error {
 public:
  Error(ErrorCode code, const std::string& message, int signal = 0)
      : std::runtime_error(message), code_(code), signal_(signal) {}
  ErrorCode code() const { return code_; }
  // The signal that stopped the command (kInterrupted), else 0.
  int signal() const { return signal_; }

 private:
  ErrorCode code_;
  int signal_;
};

// The process exit status of a command that ended with `e` (README, "Exit codes"): 1 check
// failed, 2 bad input, 3 device, 4 internal, 5 busy, 128 + signal number when interrupted (130
// for SIGINT, 143 for SIGTERM, as a shell reports a process killed by that signal).
inline int exit_status(const Error& e) {
  switch (e.code()) {
    case ErrorCode::kCheckFailed:
      return 1;
    case ErrorCode::kInvalidArgument:
    case ErrorCode::kInvalidFile:
      return 2;
    case ErrorCode::kDevice:
    case ErrorCode::kUnsupported:
      return 3;
    case ErrorCode::kInternal:
      return 4;
    case ErrorCode::kBusy:
      return 5;
    case ErrorCode::kInterrupted:
      return 128 + (e.signal() > 0 ? e.signal() : 2);
  }
  return 4;
}

inline Error invalid_argument(const std::string& message) {
  return Error(ErrorCode::kInvalidArgument, message);
}
inline Error invalid_file(const std::string& path, const std::string& message) {
  return Error(ErrorCode::kInvalidFile, path + ": " + message);
}

}  // namespace gemmtune
