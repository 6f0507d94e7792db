// SPDX-License-Identifier: Apache-2.0
#include "src/core/json_reader.hpp"

#include <exception>

namespace gemmtune {

namespace {

std::string position(const std::string& file, size_t line, const std::string& path) {
  std::string out;
  if (!file.empty()) out += file + ": ";
  if (line > 0) out += "line " + std::to_string(line) + ": ";
  if (!path.empty()) out += "at " + path + ": ";
  return out;
}

// `inner` (a path relative to `outer`) appended to `outer`.
std::string join_path(const std::string& outer, const std::string& inner) {
  if (inner.empty()) return outer;
  if (outer.empty()) return inner;
  return inner.front() == '[' ? outer + inner : outer + "." + inner;
}

// nlohmann's message without its "[json.exception.type_error.302] " prefix.
std::string library_message(const nlohmann::json::exception& e) {
  std::string what = e.what();
  if (const auto close = what.find("] ");
      what.rfind("[json.exception", 0) == 0 && close != std::string::npos) {
    what = what.substr(close + 2);
  }
  return what;
}

std::string integer_phrase(int64_t min, int64_t max) {
  if (min == JsonReader::kMinInt && max == JsonReader::kMaxInt) return "an integer";
  if (max == JsonReader::kMaxInt) return "an integer >= " + std::to_string(min);
  return "an integer from " + std::to_string(min) + " to " + std::to_string(max);
}

}  // namespace

JsonFieldError::JsonFieldError(std::string file, size_t line, std::string path, std::string detail)
    : Error(ErrorCode::kInvalidFile, position(file, line, path) + detail),
      file_(std::move(file)),
      line_(line),
      path_(std::move(path)),
      detail_(std::move(detail)) {}

std::string json_type_phrase(const nlohmann::json& j) {
  switch (j.type()) {
    case nlohmann::json::value_t::object:
      return "an object";
    case nlohmann::json::value_t::array:
      return "an array";
    case nlohmann::json::value_t::string:
      return "a string";
    case nlohmann::json::value_t::boolean:
      return "a boolean";
    case nlohmann::json::value_t::number_integer:
    case nlohmann::json::value_t::number_unsigned:
    case nlohmann::json::value_t::number_float:
      return "a number";
    case nlohmann::json::value_t::null:
      return "null";
    default:
      return "no value";
  }
}

JsonReader::JsonReader(const nlohmann::json& value, std::string file, size_t line, std::string path)
    : value_(value), file_(std::move(file)), line_(line), path_(std::move(path)) {}

void JsonReader::fail(const std::string& detail) const {
  throw JsonFieldError(file_, line_, path_, detail);
}

void JsonReader::fail(const std::string& name, const std::string& detail) const {
  throw JsonFieldError(file_, line_, child(name), detail);
}

std::string JsonReader::child(const std::string& name) const {
  return join_path(path_, name);
}

const JsonReader& JsonReader::expect_object() const {
  if (!value_.is_object()) fail("expected an object, found " + json_type_phrase(value_));
  return *this;
}

bool JsonReader::has(const std::string& name) const {
  return value_.is_object() && value_.contains(name) && !value_[name].is_null();
}

JsonReader JsonReader::field(const std::string& name) const {
  expect_object();
  if (!value_.contains(name)) fail("missing field '" + name + "'");
  return JsonReader(value_[name], file_, line_, child(name));
}

JsonReader JsonReader::object(const std::string& name) const {
  JsonReader f = field(name);
  f.expect_object();
  return f;
}

std::optional<JsonReader> JsonReader::optional_object(const std::string& name) const {
  if (!has(name)) return std::nullopt;
  return object(name);
}

std::vector<JsonReader> JsonReader::array(const std::string& name, bool required) const {
  std::vector<JsonReader> out;
  if (!required && !has(name)) return out;
  const JsonReader f = field(name);
  if (!f.value_.is_array()) f.fail("expected an array, found " + json_type_phrase(f.value_));
  for (size_t i = 0; i < f.value_.size(); ++i) {
    out.emplace_back(f.value_[i], file_, line_, f.path_ + "[" + std::to_string(i) + "]");
  }
  return out;
}

std::string JsonReader::as_string() const {
  if (!value_.is_string()) fail("expected a string, found " + json_type_phrase(value_));
  return value_.get<std::string>();
}

int64_t JsonReader::as_integer(int64_t min, int64_t max) const {
  const bool too_large =
      value_.is_number_unsigned() && value_.get<uint64_t>() > static_cast<uint64_t>(kMaxInt);
  if (!value_.is_number_integer() || too_large) {
    fail("expected " + integer_phrase(min, max) + ", found " +
         (too_large ? std::string("a number out of range") : json_type_phrase(value_)));
  }
  const int64_t v = value_.get<int64_t>();
  if (v < min || v > max) {
    fail("expected " + integer_phrase(min, max) + ", found " + std::to_string(v));
  }
  return v;
}

std::string JsonReader::string(const std::string& name) const {
  return field(name).as_string();
}

int64_t JsonReader::integer(const std::string& name, int64_t min, int64_t max) const {
  return field(name).as_integer(min, max);
}

double JsonReader::number(const std::string& name) const {
  const JsonReader f = field(name);
  if (!f.value_.is_number()) f.fail("expected a number, found " + json_type_phrase(f.value_));
  return f.value_.get<double>();
}

bool JsonReader::boolean(const std::string& name) const {
  const JsonReader f = field(name);
  if (!f.value_.is_boolean()) f.fail("expected true or false, found " + json_type_phrase(f.value_));
  return f.value_.get<bool>();
}

std::string JsonReader::string_or(const std::string& name, const std::string& fallback) const {
  return has(name) ? string(name) : fallback;
}

int64_t JsonReader::integer_or(const std::string& name, int64_t fallback, int64_t min,
                               int64_t max) const {
  return has(name) ? integer(name, min, max) : fallback;
}

std::optional<int64_t> JsonReader::optional_integer(const std::string& name, int64_t min,
                                                    int64_t max) const {
  if (!has(name)) return std::nullopt;
  return integer(name, min, max);
}

double JsonReader::number_or(const std::string& name, double fallback) const {
  return has(name) ? number(name) : fallback;
}

bool JsonReader::boolean_or(const std::string& name, bool fallback) const {
  return has(name) ? boolean(name) : fallback;
}

void JsonReader::rethrow_here(bool relative) const {
  try {
    throw;
  } catch (const JsonFieldError& e) {
    if (!e.file().empty()) throw;  // positioned by a reader that knew the file
    throw JsonFieldError(file_, e.line() > 0 ? e.line() : line_,
                         relative ? join_path(path_, e.path()) : e.path(), e.detail());
  } catch (const nlohmann::json::exception& e) {
    fail(library_message(e));
  } catch (const Error& e) {
    // A parser's refusal of a value ("unknown precision '37'"): the value is the file's fault.
    if (e.code() != ErrorCode::kInvalidArgument) throw;
    fail(e.what());
  }
}

}  // namespace gemmtune
