// SPDX-License-Identifier: Apache-2.0
// Regression check between two databases of the same problems (a checked-in baseline and a fresh
// re-measurement): per entry GFLOPS before and after, their ratio, and a verdict that takes the
// measured noise (the entries' coefficients of variation) into account.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "src/db/database.hpp"

namespace gemmtune {

struct CompareOptions {
  double threshold = 0.03;    // tolerated slowdown beyond noise, as a fraction
  double noise_sigmas = 2.0;  // how many combined standard deviations count as noise
};

// "3%" or "0.03" (a bare number must be below 1). Throws Error on anything else.
double parse_threshold(const std::string& text);

enum class CompareVerdict {
  kFaster,      // faster beyond threshold and noise
  kSame,        // within threshold
  kNoise,       // slower than the threshold, but within the measured noise
  kRegression,  // slower beyond threshold and noise: fails the check
  kFailed,      // the new measurement failed (wrong result, compile error...): fails the check
  kMissing,     // in the baseline, absent from the new database: fails the check
  kNew,         // only in the new database
  kBaseFailed,  // the baseline entry itself is not ok: nothing to compare
};
std::string to_string(CompareVerdict v);
bool is_failure(CompareVerdict v);

struct CompareRow {
  EntryKey key;
  std::optional<double> base_gflops, new_gflops;
  double ratio = 0;    // new / base GFLOPS
  double noise = 0;    // combined relative noise sqrt(cv_base^2 + cv_new^2)
  double allowed = 0;  // tolerated slowdown: threshold + noise_sigmas * noise
  CompareVerdict verdict = CompareVerdict::kSame;
  std::string note;
};

struct CompareReport {
  std::string base_name, new_name;
  std::string base_device, new_device;
  CompareOptions options;
  std::vector<CompareRow> rows;
  int failures() const;
};

CompareReport compare_databases(const Database& base, const Database& now,
                                const CompareOptions& options);

// Why `base` and `now` are not measurements of the same hardware ("'A' (vendor) and 'B'
// (vendor)"), or nullopt: timings of different devices say nothing about a regression.
std::optional<std::string> device_mismatch(const Database& base, const Database& now);

std::string to_table(const CompareReport& report);     // for the terminal
std::string to_markdown(const CompareReport& report);  // e.g. a CI job summary
std::string to_junit(const CompareReport& report);     // JUnit XML, one test case per entry
void to_json(nlohmann::json& j, const CompareRow& row);
void to_json(nlohmann::json& j, const CompareReport& report);

}  // namespace gemmtune
