// The search journal: one JSON object per line, appended and synced to disk the moment each
// evaluation finishes, so that an interrupted search loses nothing it measured. A header line
// starts each run (kernel, space, device, settings); result lines carry the problem and the
// Result. A journal of an exhaustive run doubles as a replay file (read back, optionally gzipped).
#pragma once

#include <cstdio>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "src/core/problem.hpp"
#include "src/core/result.hpp"

namespace gemmtune {

struct JournalEntry {
  Problem problem;
  Result result;
  double elapsed_s = 0;  // since the start of the run that measured it
};

struct Journal {
  std::string path;
  std::vector<nlohmann::json> headers;  // one per run, in file order
  std::vector<JournalEntry> entries;
  size_t skipped_lines = 0;  // unreadable lines (a line cut short by a killed writer)
};

// A key that is equal for problems that must be measured separately (shape, layout, precision,
// scaling, batch, epilogue, kernel).
std::string problem_key(const Problem& p);

// Reads a journal (.jsonl, or gzip-compressed when built with zlib). Unreadable lines are skipped
// and counted, since a writer killed mid-line leaves a partial line behind.
Journal read_journal(const std::string& path);

enum class JournalOpen {
  kAppend,  // append (created when missing): a resumed search
  kCreate,  // a new journal: an existing file is an error (Error kInvalidArgument)
  kResume,  // an existing journal: a missing file is an error (Error kInvalidFile)
};

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
  void append(const Problem& problem, const Result& result, double elapsed_s);

 private:
  void write_line(const nlohmann::json& j);
  std::string path_;
  int fd_ = -1;
};

void to_json(nlohmann::json& j, const JournalEntry& e);
void from_json(const nlohmann::json& j, JournalEntry& e);

}  // namespace gemmtune
