// SPDX-License-Identifier: Apache-2.0
// Recordings that gemmtune replays, whatever tool wrote them: its own journals, Kernel Tuner cache
// files and T4 results files (the auto-tuning community's exchange format). Each is read into a
// Journal, so every reader of recordings (search-eval, replayed searches) takes all three.
#pragma once

#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "src/db/journal.hpp"

namespace gemmtune {

// Whether `path` holds a gemmtune journal (its first record is a journal header or result line).
bool is_journal_file(const std::string& path);

// A journal, a Kernel Tuner cache file or T4 results (any of them optionally gzip-compressed),
// told apart by their content. A Kernel Tuner cache that was cut short (Kernel Tuner writes it
// entry by entry) is read up to its last whole entry, with a warning. Throws Error(kInvalidFile)
// naming the file and what is wrong.
Journal read_recording(const std::string& path);

// What a whole JSON document of recordings is: "a Kernel Tuner cache file" (with "cache" and
// "tune_params"), "T4 results" (with "results" and "schema_version"), else "".
std::string recording_document_kind(const nlohmann::ordered_json& doc);

// Kernel Tuner cache file (`doc` parsed from `path`, in file order): the problem from kernel_name
// and problem_size, one result per cache entry, failed configurations with their failure class.
Journal kernel_tuner_cache_journal(const std::string& path, const nlohmann::ordered_json& doc);

// T4 results (`doc` parsed from `path`): one result per item, its invalidity as the status.
Journal t4_results_journal(const std::string& path, const nlohmann::ordered_json& doc);

// One result to write as T4.
struct T4Record {
  std::string kernel;  // the template measured
  Problem problem;
  Result result;
  std::string timestamp;  // ISO 8601, or empty when unknown
};

// The T4 results document of `records` (T4 results schema 1.0.0). Each result carries its problem
// as the measurements "kernel" and "problem_size" ([M, N, K]), which t4_results_journal reads
// back; the objective is "time" (milliseconds).
nlohmann::ordered_json t4_results(const std::vector<T4Record>& records);
// Records of every journalled result.
std::vector<T4Record> t4_records(const Journal& journal);

}  // namespace gemmtune
