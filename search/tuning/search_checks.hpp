// SPDX-License-Identifier: Apache-2.0
// What a search checks before it measures anything (its outputs can be written, a resumed journal
// holds the problems asked for), and what search-eval checks of a recording (that it covers the
// whole space), so that hours of measurement never end in an error that was known at the start.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "search/tuning/tuner.hpp"
#include "src/db/database.hpp"
#include "src/db/journal.hpp"

namespace gemmtune {

// The search output, the tuned database (`db_path`, "" for none) with its lock and the reports
// beside it can be written, and an existing database is a valid one of `device`'s hardware.
// Throws Error(kInvalidFile) naming the file.
void check_search_outputs(const std::string& output, const std::string& db_path,
                          const DatabaseDevice& device, const std::string& templates_dir);

// The problems of `settings` (a search's settings as its journal header records them: kernel,
// shapes, layout, order, precision, batch, batch_layout, epilogue, alpha, beta) that no run of
// `journal` searched, each described against what the journal holds ("kernel xgemm_fast, the
// journal's is xgemm"). Empty when all are there, or when the journal's headers predate settings.
std::vector<std::string> problems_not_in_journal(const Journal& journal,
                                                 const nlohmann::json& settings);

// Throws Error(kInvalidArgument) naming `path` and the problems when problems_not_in_journal
// finds any: a resume that silently started a new problem would append a second search to the
// journal (allowed with --new-problems).
void check_resume_problems(const std::string& path, const Journal& journal,
                           const nlohmann::json& settings);

// Refuses (as bad input) a problem whose matrices hold more elements than the kernels' 32-bit
// indices address: m·k, k·n and m·n, each times the batch (plus one for the stride gaps).
void check_index_range(const Problem& p);

// check_fits_device with the limits a journal header records of a device ("global_mem_bytes",
// "max_alloc_bytes"; absent ones are not checked).
void check_fits_device(const Problem& problem, const nlohmann::json& device);

// Throws Error(kCheckFailed) when a search of `problem` ended without any valid configuration.
void require_valid_result(const Problem& problem, const TuneOutcome& outcome,
                          const std::string& journal);

// Why `journal` is not a recording of a whole space ("a random search of 100 evaluations"), or
// nullopt: every run was an exhaustive search without a budget. A run whose header holds no
// settings (an older or synthetic recording) is taken as whole.
std::optional<std::string> partial_recording(const Journal& journal);

}  // namespace gemmtune
