// SPDX-License-Identifier: Apache-2.0
// The one way gemmtune reads fields of JSON that came from a file (databases, journals, caches,
// profiles): a wrong type is reported like a missing field, as one Error(kInvalidFile) naming the
// file, the line (JSON lines: one record a line) and the field's path ("at entries[2].gflops:
// expected a number, found string"), never as a library exception that reads as an internal error.
#pragma once

#include <cstdint>
#include <limits>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "src/core/error.hpp"

namespace gemmtune {

// What a field read by JsonReader did wrong. An Error of kind kInvalidFile whose message is
// "FILE: line N: at PATH: DETAIL" (each part only when known); a reader of the enclosing value
// rethrows it with its own file, line and path in front.
class JsonFieldError : public Error {
 public:
  JsonFieldError(std::string file, size_t line, std::string path, std::string detail);
  const std::string& file() const { return file_; }
  size_t line() const { return line_; }
  const std::string& path() const { return path_; }
  const std::string& detail() const { return detail_; }

 private:
  std::string file_;
  size_t line_;
  std::string path_;
  std::string detail_;
};

// A JSON value at `path` of `file` (line `line` of a JSON-lines file; 0 = not a line). Does not
// own the value: it must outlive the reader.
class JsonReader {
 public:
  static constexpr int64_t kMinInt = std::numeric_limits<int64_t>::min();
  static constexpr int64_t kMaxInt = std::numeric_limits<int64_t>::max();

  explicit JsonReader(const nlohmann::json& value, std::string file = "", size_t line = 0,
                      std::string path = "");

  const nlohmann::json& value() const { return value_; }
  const std::string& path() const { return path_; }
  [[noreturn]] void fail(const std::string& detail) const;  // this value is wrong
  [[noreturn]] void fail(const std::string& name, const std::string& detail) const;

  // This value must be an object (or array): throws naming the path otherwise.
  const JsonReader& expect_object() const;
  bool is_object() const { return value_.is_object(); }
  // A field that is present and not null.
  bool has(const std::string& name) const;

  // A required field of any type, as a reader of its own.
  JsonReader field(const std::string& name) const;
  JsonReader object(const std::string& name) const;
  std::optional<JsonReader> optional_object(const std::string& name) const;
  // The elements of an array field (a missing field is an empty array when `required` is false).
  std::vector<JsonReader> array(const std::string& name, bool required = true) const;

  // Required fields: missing, null or of another type is an error.
  std::string string(const std::string& name) const;
  int64_t integer(const std::string& name, int64_t min = kMinInt, int64_t max = kMaxInt) const;
  double number(const std::string& name) const;
  bool boolean(const std::string& name) const;
  // Optional fields: missing or null gives `fallback`; present of another type is an error.
  std::string string_or(const std::string& name, const std::string& fallback) const;
  int64_t integer_or(const std::string& name, int64_t fallback, int64_t min = kMinInt,
                     int64_t max = kMaxInt) const;
  std::optional<int64_t> optional_integer(const std::string& name, int64_t min = kMinInt,
                                          int64_t max = kMaxInt) const;
  double number_or(const std::string& name, double fallback) const;
  bool boolean_or(const std::string& name, bool fallback) const;

  // This value as a string / integer (an element of an array).
  std::string as_string() const;
  int64_t as_integer(int64_t min = kMinInt, int64_t max = kMaxInt) const;

  // A field read by T's from_json (which reads through its own JsonReader, whose paths are
  // relative to the value it was given): what that throws is named with this reader's file, line
  // and path.
  template <typename T>
  T get(const std::string& name) const {
    const JsonReader f = field(name);
    return f.convert<T>();
  }
  template <typename T>
  std::optional<T> optional(const std::string& name) const {
    if (!has(name)) return std::nullopt;
    return get<T>(name);
  }
  // A string field turned into a value by `parse` (parse_precision, ...), whose refusal names the
  // field; parsed_or parses `fallback` when the field is missing.
  template <typename Parse>
  auto parsed(const std::string& name, Parse parse) const {
    const JsonReader f = field(name);
    return f.read([&] { return parse(f.as_string()); });
  }
  template <typename Parse>
  auto parsed_or(const std::string& name, const std::string& fallback, Parse parse) const {
    if (has(name)) return parsed(name, parse);
    return read([&] { return parse(fallback); });
  }
  // This value read by T's from_json.
  template <typename T>
  T convert() const {
    try {
      return value_.get<T>();
    } catch (...) {
      rethrow_here(true);
    }
  }
  // Runs `read_fn` (which reads this value through this reader or plain functions), naming this
  // reader's file, line and path in what they throw: a library type error, or an invalid value
  // (Error kInvalidArgument from a parser such as parse_precision). Field errors of this reader
  // already name their position and pass unchanged.
  template <typename F>
  auto read(F&& read_fn) const -> decltype(read_fn()) {
    try {
      return read_fn();
    } catch (...) {
      rethrow_here(false);
    }
  }

 private:
  std::string child(const std::string& name) const;
  // Rethrows the exception being handled as a JsonFieldError at this reader's position; a field
  // error gets this reader's path in front when `relative` (it came from a from_json).
  [[noreturn]] void rethrow_here(bool relative) const;

  const nlohmann::json& value_;
  std::string file_;
  size_t line_;
  std::string path_;
};

// The JSON type of `j` as a message says it ("a string", "a number", "null", ...).
std::string json_type_phrase(const nlohmann::json& j);

}  // namespace gemmtune
