// SPDX-License-Identifier: Apache-2.0
#include "src/core/file_identity.hpp"

#include <sys/stat.h>

#include <fstream>

#include <nlohmann/json.hpp>

#include "src/core/error.hpp"

namespace gemmtune {

namespace {

// Finds the top-level "format" string of a JSON document while streaming it, and stops there:
// deciding what kind of file an output would replace needs no more of it.
class FormatProbe : public nlohmann::json::json_sax_t {
 public:
  std::string format;

  bool null() override { return value(); }
  bool boolean(bool) override { return value(); }
  bool number_integer(number_integer_t) override { return value(); }
  bool number_unsigned(number_unsigned_t) override { return value(); }
  bool number_float(number_float_t, const string_t&) override { return value(); }
  bool binary(binary_t&) override { return value(); }
  bool string(string_t& s) override {
    if (depth_ == 1 && format_next_) {
      format = s;
      return false;  // found: stop reading
    }
    return value();
  }
  bool start_object(std::size_t) override { return open(); }
  bool end_object() override { return close(); }
  bool start_array(std::size_t) override { return open(); }
  bool end_array() override { return close(); }
  bool key(string_t& k) override {
    format_next_ = depth_ == 1 && k == "format";
    return true;
  }
  bool parse_error(std::size_t, const std::string&, const nlohmann::json::exception&) override {
    return false;
  }

 private:
  bool value() {
    format_next_ = false;
    return true;
  }
  bool open() {
    // Anything but an object at the top is not a gemmtune file.
    if (depth_ == 0 && started_) return false;
    started_ = true;
    format_next_ = false;
    ++depth_;
    return true;
  }
  bool close() {
    --depth_;
    return true;
  }
  int depth_ = 0;
  bool started_ = false;
  bool format_next_ = false;
};

}  // namespace

bool same_file(const std::string& a, const std::string& b) {
  if (a.empty() || b.empty()) return false;
  struct stat sa {};
  struct stat sb {};
  if (::stat(a.c_str(), &sa) != 0 || ::stat(b.c_str(), &sb) != 0) return false;
  return sa.st_dev == sb.st_dev && sa.st_ino == sb.st_ino;
}

void check_output_not_input(const std::string& output, const std::vector<NamedInput>& inputs,
                            const std::string& option) {
  if (output.empty()) return;
  for (const auto& in : inputs) {
    if (same_file(output, in.path)) {
      throw invalid_argument(option + " " + output + " is the same file as " + in.option + " " +
                             in.path + ": an output never replaces an input, choose another path");
    }
  }
}

bool file_has_format(const std::string& path, const std::string& format) {
  // Only regular files: a device or a FIFO is never a database, and must not be read.
  struct stat st {};
  if (::stat(path.c_str(), &st) != 0 || !S_ISREG(st.st_mode)) return false;
  std::ifstream in(path, std::ios::binary);
  if (!in) return false;
  FormatProbe probe;
  nlohmann::json::sax_parse(in, &probe, nlohmann::json::input_format_t::json, false);
  return probe.format == format;
}

void check_not_replacing(const std::string& output, const std::string& option,
                         const std::string& format, const std::string& what) {
  if (file_has_format(output, format)) {
    throw invalid_argument(option + " " + output + " is " + what +
                           " this command did not read: choose another path, or pass --force "
                           "to replace it");
  }
}

}  // namespace gemmtune
