// SPDX-License-Identifier: Apache-2.0
// What the Kernel Tuner cache and T4 readers share: parameter values as gemmtune's whole numbers,
// the problem's shape from a recorded problem size, and results from recorded times.
#pragma once

#include <map>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "src/core/problem.hpp"
#include "src/core/result.hpp"

namespace gemmtune::recording {

// gemmtune's configurations hold whole numbers. A parameter whose values are all whole numbers
// (or booleans, as 0 and 1) keeps them; one with any other value (a fraction, a string) is coded
// by each value's position in its list, which keeps the space's structure for a searcher.
class ValueCoder {
 public:
  // `values`: each parameter's values, in their declared (or first-seen) order.
  explicit ValueCoder(std::map<std::string, std::vector<nlohmann::ordered_json>> values);
  // The value of `name` as a whole number; `where` names the item in a message. A value of a
  // coded parameter that is not in its list throws Error(kInvalidFile).
  int64_t code(const std::string& name, const nlohmann::ordered_json& value,
               const std::string& where) const;
  // Parameters coded by position (their values were not whole numbers).
  std::vector<std::string> coded() const;

 private:
  std::map<std::string, std::vector<nlohmann::ordered_json>> values_;
  std::map<std::string, bool> coded_;
};

// What a reader says about a file: warnings (something is guessed) and notes (how it was read).
struct ReadNotes {
  std::vector<std::string> warnings, notes;
};

// A recorded problem size (a number, or an array of up to three numbers: M, N, K) as a shape.
// Missing dimensions are 1 (a warning), except that when exactly one is missing and `flops` (the
// floating-point operations of one run, 0 when unknown) is known, it is derived from
// 2·M·N·K = flops (a note).
Shape shape_from_size(const nlohmann::ordered_json& size, double flops, ReadNotes& notes);

// A measured result: the repetitions' statistics when recorded, else `time_ms` alone.
Result measured_result(const Configuration& config, double time_ms,
                       const std::vector<double>& runs_ms, double gflops, double compile_ms);

// What a recorded figure may be: a duration that was measured is positive; a compile time may be
// zero (a build served from a cache), as may a rate; none is negative.
enum class Figure { kMeasured, kNonNegative };

// The fields of one recorded object (the document, a cache entry, a T4 result), read so that a
// wrong one is one Error(kInvalidFile) naming `where` (the file and the object) and the field, not
// the JSON library's words. Missing or null gives `fallback`.
std::string string_field(const nlohmann::ordered_json& object, const std::string& name,
                         const std::string& fallback, const std::string& where);
double number_field(const nlohmann::ordered_json& object, const std::string& name, double fallback,
                    Figure figure, const std::string& where);
// An object field (missing or null: an empty object).
nlohmann::ordered_json object_field(const nlohmann::ordered_json& object, const std::string& name,
                                    const std::string& where);

// The measured durations of a JSON array (null: none); `where` names the array in the message
// when it is not one or holds something other than a positive number.
std::vector<double> durations(const nlohmann::ordered_json& array, const std::string& where);

}  // namespace gemmtune::recording
