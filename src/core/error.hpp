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
};

class Error : public std::runtime_error {
 public:
  Error(ErrorCode code, const std::string& message) : std::runtime_error(message), code_(code) {}
  ErrorCode code() const { return code_; }

 private:
  ErrorCode code_;
};

inline Error invalid_argument(const std::string& message) {
  return Error(ErrorCode::kInvalidArgument, message);
}
inline Error invalid_file(const std::string& path, const std::string& message) {
  return Error(ErrorCode::kInvalidFile, path + ": " + message);
}

}  // namespace gemmtune
