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

// The numbers of a JSON array (`where` names it in the message when it is not one).
std::vector<double> numbers(const nlohmann::ordered_json& array, const std::string& where);

}  // namespace gemmtune::recording
