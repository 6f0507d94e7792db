// SPDX-License-Identifier: Apache-2.0
// The search journal: one JSON object per line, appended the moment each evaluation finishes, so
// that an interrupted search loses nothing it measured (and synced to disk at least every
// kJournalSyncInterval, against a crash of the machine). A header line
// starts each run (kernel, space, device, settings); result lines carry the problem and the
// Result. A journal of an exhaustive run doubles as a replay file (read back, optionally gzipped).
#pragma once

#include <chrono>
#include <cstdio>
#include <mutex>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "src/core/json_reader.hpp"
#include "src/core/problem.hpp"
#include "src/core/problem_key.hpp"
#include "src/core/result.hpp"

namespace gemmtune {

struct JournalEntry {
  std::string kernel = kDefaultKernel;  // the template measured; in the file, inside "problem"
  Problem problem;
  Result result;
  double elapsed_s = 0;  // since the start of the run that measured it
};

struct Journal {
  std::string path;
  std::vector<nlohmann::json> headers;  // one per run, in file order
  std::vector<size_t> header_lines;     // the line of each header (1 = first)
  std::vector<JournalEntry> entries;
  // Unreadable lines skipped: a last line cut short by a killed writer (or, JournalDamage::kSkip,
  // any damaged line).
  size_t skipped_lines = 0;

  // Header `i` as a reader whose errors name the journal, the line and the field.
  JsonReader header(size_t i) const;
};

// problem_key(kernel, problem) of the entry (src/core/problem_key.hpp). Inline, so that code
// that keys journal entries does not link the journal reader (and zlib) for it.
inline std::string problem_key(const JournalEntry& e) {
  return problem_key(e.kernel, e.problem);
}

// Reads a journal (.jsonl, or gzip-compressed when built with zlib; a regular file of at most
// kMaxJournalBytes when inflated). An unreadable last line is skipped and counted, since a writer
// killed mid-line leaves a partial line behind; an unreadable line before others is an error
// naming it, as is a record field of the wrong type.
enum class JournalDamage {
  kRefuse,  // a damaged line before the last is an error (journals a search continues)
  kSkip,    // every damaged line is skipped and counted, and no record is no error (caches)
};
Journal read_journal(const std::string& path, JournalDamage damage = JournalDamage::kRefuse);

enum class JournalOpen {
  kAppend,  // append (created when missing): a resumed search
  kCreate,  // a new journal: an existing file is an error (Error kInvalidArgument)
  kResume,  // an existing journal: a missing file is an error (Error kInvalidFile)
};

constexpr std::chrono::seconds kJournalSyncInterval{1};

class JournalWriter {
 public:
  // Opens `path` for appending and locks it for the writer's lifetime: a journal another process
  // is writing is refused with Error(kBusy).
  explicit JournalWriter(const std::string& path, JournalOpen how = JournalOpen::kAppend);
  ~JournalWriter();
  JournalWriter(const JournalWriter&) = delete;
  JournalWriter& operator=(const JournalWriter&) = delete;

  const std::string& path() const { return path_; }
  // `header` gets "type": "header" added.
  void write_header(nlohmann::json header);
  void append(const std::string& kernel, const Problem& problem, const Result& result,
              double elapsed_s);
  // Replaces what the journal holds by `header` and `entries`, in place under the lock: a
  // damaged evaluation cache keeps what it could read.
  void rewrite(nlohmann::json header, const std::vector<JournalEntry>& entries);

 private:
  void write_line(const nlohmann::json& j);
  void drop_cut_short_tail();
  std::string path_;
  int fd_ = -1;
  std::mutex mutex_;  // several lanes of a search append at once
  std::chrono::steady_clock::time_point synced_{};
};

void to_json(nlohmann::json& j, const JournalEntry& e);
void from_json(const nlohmann::json& j, JournalEntry& e);

}  // namespace gemmtune
