// SPDX-License-Identifier: Apache-2.0
#include "src/db/journal.hpp"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <filesystem>

#include <fmt/format.h>
#include <spdlog/spdlog.h>

#include "src/core/error.hpp"
#include "src/core/json_util.hpp"
#include "src/core/problem_key.hpp"
#include "src/db/database.hpp"
#include "src/db/file_lock.hpp"
#include "src/db/file_text.hpp"
#include "src/db/recording.hpp"

namespace gemmtune {

void to_json(nlohmann::json& j, const JournalEntry& e) {
  j = {{"type", "result"},
       {"problem", problem_json(e.problem, e.kernel)},
       {"result", e.result},
       {"elapsed_s", e.elapsed_s}};
}

namespace {

// The times of a recorded result. A result that ran took some time, and nothing takes less than
// none: a figure outside that is damage (a replay would rank the configuration first on it).
void check_times(const JsonReader& r, const JournalEntry& e) {
  const auto at_least = [&](const std::string& field, double value, bool positive) {
    if (positive ? value > 0 : value >= 0) return;
    r.fail(field,
           fmt::format("expected a {}, found {}",
                       positive ? "positive time for a result that ran" : "number >= 0", value));
  };
  const TimingStats& t = e.result.time;
  at_least("result.time.median_ms", t.median_ms, e.result.ok());
  at_least("result.time.min_ms", t.min_ms, false);
  at_least("result.time.mean_ms", t.mean_ms, false);
  at_least("result.time.max_ms", t.max_ms, false);
  at_least("result.time.kernel_median_ms", t.kernel_median_ms, false);
  at_least("result.compile_ms", e.result.compile_ms, false);
  at_least("result.gflops", e.result.gflops, false);
  at_least("elapsed_s", e.elapsed_s, false);
}

}  // namespace

void from_json(const nlohmann::json& j, JournalEntry& e) {
  const JsonReader r(j);
  e.problem = r.get<Problem>("problem");
  e.kernel = kernel_in_problem_json(j.at("problem"));
  e.result = r.get<Result>("result");
  e.elapsed_s = r.number_or("elapsed_s", 0.0);
  check_times(r, e);
}

namespace {

std::vector<std::string> split_lines(const std::string& text) {
  std::vector<std::string> lines;
  size_t start = 0;
  while (start < text.size()) {
    const size_t end = std::min(text.find('\n', start), text.size());
    lines.push_back(text.substr(start, end - start));
    start = end + 1;
  }
  return lines;
}

// A first line that is no journal record: another kind of file given by mistake.
[[noreturn]] void not_a_journal(const std::string& path, const std::string& why) {
  throw invalid_file(
      path, "is not a search journal: its first line is not a journal record (" + why + ")");
}

// A whole JSON document given where a journal goes (its first line is no record): what it is and
// which commands read it, else nothing (the journal's own error stands).
void refuse_document(const std::string& path, const std::string& text) {
  const auto doc = nlohmann::ordered_json::parse(text, nullptr, false);
  if (doc.is_discarded()) return;
  if (const std::string kind = recording_document_kind(doc); !kind.empty()) {
    throw invalid_file(path, "is " + kind +
                                 ", not a search journal: search-eval --replay and search "
                                 "--replay read it");
  }
  if (doc.is_object() && doc.value("format", nlohmann::ordered_json()) == kDatabaseFormat) {
    throw invalid_file(path, "is a tuned database, not a search journal");
  }
}

// Adds the record of line `number` to `j`.
void read_record(Journal& j, const nlohmann::json& record, size_t number) {
  const JsonReader r(record, j.path, number);
  r.expect_object();
  const std::string type = r.string("type");
  if (type == "header") {
    j.headers.push_back(record);
    j.header_lines.push_back(number);
  } else if (type == "result") {
    j.entries.push_back(r.convert<JournalEntry>());
  } else {
    r.fail("type", "'" + type + "' is neither a header nor a result record");
  }
}

// Reads line `number` into `j`; only the `last` line may be cut short (skipped with a warning).
void read_line(Journal& j, const std::string& line, size_t number, bool last) {
  const std::string& path = j.path;
  nlohmann::json record;
  try {
    record = nlohmann::json::parse(line);
  } catch (const nlohmann::json::out_of_range& e) {
    // Not a line cut short (that would be a syntax error): a damaged figure such as 1e999.
    throw invalid_file(path,
                       "line " + std::to_string(number) + ": " + describe_out_of_range(line, e));
  } catch (const nlohmann::json::parse_error& e) {
    if (last) {
      ++j.skipped_lines;
      spdlog::warn("{}: line {} is not complete JSON (a write cut short?); skipped", path, number);
      return;
    }
    // Writers append whole lines (and drop a cut-short tail before appending): a broken line
    // followed by others is damage, and skipping it would measure its result again.
    const std::string what = fmt::format(
        "line {} is not valid JSON (column {}) and is not the last line: a killed search cuts "
        "short only the last",
        number, e.byte);
    if (j.headers.empty() && j.entries.empty()) not_a_journal(path, what);
    throw invalid_file(path, what);
  }
  try {
    read_record(j, record, number);
  } catch (const JsonFieldError& e) {
    // A first line without a record type: another kind of file.
    const bool untyped = e.path().empty() || e.path() == "type";
    if (untyped && j.headers.empty() && j.entries.empty()) {
      not_a_journal(path, fmt::format("line {}: {}{}", number,
                                      e.path().empty() ? "" : "at " + e.path() + ": ", e.detail()));
    }
    throw;
  }
}

}  // namespace

Journal read_journal(const std::string& path, JournalDamage damage) {
  Journal j;
  j.path = path;
  const std::string text = read_file_text(path, kMaxJournalBytes);
  const auto lines = split_lines(text);
  // The last line that holds anything: only it may be cut short by a killed writer.
  size_t last = lines.size();
  while (last > 0 && lines[last - 1].find_first_not_of(" \t\r") == std::string::npos) --last;
  const bool skip_damage = damage == JournalDamage::kSkip;
  for (size_t i = 0; i < last; ++i) {
    const size_t number = i + 1;
    if (lines[i].find_first_not_of(" \t\r") == std::string::npos) continue;
    try {
      read_line(j, lines[i], number, number == last);
    } catch (const Error& e) {
      if (!skip_damage && j.headers.empty() && j.entries.empty()) refuse_document(path, text);
      if (!skip_damage || e.code() != ErrorCode::kInvalidFile) throw;
      ++j.skipped_lines;
    }
  }
  if (j.headers.empty() && j.entries.empty() && !skip_damage) {
    throw invalid_file(path, "holds no journal record");
  }
  return j;
}

JsonReader Journal::header(size_t i) const {
  return JsonReader(headers.at(i), path, i < header_lines.size() ? header_lines[i] : 0);
}

JournalWriter::JournalWriter(const std::string& path, JournalOpen how) : path_(path) {
  if (ends_with(path, ".gz")) {
    throw invalid_argument("journal " + path + ": journals are written uncompressed (.jsonl)");
  }
  const auto parent = std::filesystem::path(path).parent_path();
  std::error_code ec;
  if (!parent.empty()) std::filesystem::create_directories(parent, ec);
  // kCreate: O_EXCL makes "the journal does not exist yet" and "it is mine" one step, so two
  // searches started at once into one folder cannot both start the same journal.
  const int flags = O_WRONLY | O_APPEND | O_CLOEXEC | O_NONBLOCK |
                    (how == JournalOpen::kCreate   ? O_CREAT | O_EXCL
                     : how == JournalOpen::kAppend ? O_CREAT
                                                   : 0);
  fd_ = ::open(path.c_str(), flags, 0644);
  if (fd_ < 0 && errno == EEXIST) {
    throw invalid_argument("journal " + path + " already exists: continue it with --resume " +
                           path + ", or choose another file with --journal");
  }
  if (fd_ < 0 && (errno == EISDIR || errno == ENXIO)) {
    // A folder, or a FIFO nobody reads: never a journal.
    throw invalid_file(path, std::string("is ") + (errno == EISDIR ? "a folder" : "a FIFO") +
                                 ", not a regular file; not used");
  }
  if (fd_ < 0)
    throw invalid_file(path, std::string("cannot open for writing: ") + std::strerror(errno));
  const int opened = fd_;
  fd_ = -1;
  require_regular_file(opened, path);  // a device (/dev/zero) or a FIFO with a reader
  fd_ = opened;
  // Held until the writer closes: a second search on this journal (a second --resume) is refused
  // instead of measuring the same configurations again and interleaving its lines.
  try {
    lock_open_file(fd_, path, "journal " + path);
  } catch (...) {
    ::close(fd_);
    fd_ = -1;
    throw;
  }
  drop_cut_short_tail();
}

void JournalWriter::drop_cut_short_tail() {
  // A writer killed mid-line leaves a tail without its newline. Appending after it would put the
  // broken line before others, where readers refuse it as damage; it holds no whole record, so
  // it is dropped (under the lock: no other writer is appending).
  struct stat st {};
  if (::fstat(fd_, &st) != 0 || st.st_size == 0) return;
  const int rfd = ::open(path_.c_str(), O_RDONLY | O_CLOEXEC);
  if (rfd < 0) return;
  off_t end = st.st_size;
  char c = 0;
  while (end > 0 && ::pread(rfd, &c, 1, end - 1) == 1 && c != '\n') --end;
  ::close(rfd);
  if (end == st.st_size) return;
  spdlog::warn("{}: its last line was cut short ({} bytes, a killed search); dropped", path_,
               st.st_size - end);
  if (::ftruncate(fd_, end) != 0) {
    const int err = errno;
    ::close(fd_);
    fd_ = -1;
    throw invalid_file(path_,
                       std::string("cannot drop its cut-short last line: ") + std::strerror(err));
  }
}

JournalWriter::~JournalWriter() {
  if (fd_ >= 0) {
    ::fsync(fd_);
    ::close(fd_);
  }
}

void JournalWriter::write_header(nlohmann::json header) {
  header["type"] = "header";
  write_line(header);
}

void JournalWriter::rewrite(nlohmann::json header, const std::vector<JournalEntry>& entries) {
  if (::ftruncate(fd_, 0) != 0) {
    throw invalid_file(path_, std::string("cannot rewrite: ") + std::strerror(errno));
  }
  write_header(std::move(header));
  for (const auto& e : entries) write_line(e);
  ::fsync(fd_);  // what was there is gone: what replaces it is on disk before anything else
}

void JournalWriter::append(const std::string& kernel, const Problem& problem, const Result& result,
                           double elapsed_s) {
  write_line(JournalEntry{kernel, problem, result, elapsed_s});
}

void JournalWriter::write_line(const nlohmann::json& j) {
  // One write() per record: with O_APPEND the line lands whole or (if killed) as a tail that the
  // reader skips, and a killed process loses nothing written. fsync, at most every
  // kJournalSyncInterval (each took milliseconds of a measuring lane at a few hundred results a
  // minute), bounds what a crash of the machine can take to that last interval.
  const std::string line = j.dump() + "\n";
  std::lock_guard<std::mutex> lock(mutex_);
  size_t done = 0;
  while (done < line.size()) {
    const ssize_t n = ::write(fd_, line.data() + done, line.size() - done);
    if (n < 0) {
      if (errno == EINTR) continue;
      throw invalid_file(path_, std::string("cannot write: ") + std::strerror(errno));
    }
    done += size_t(n);
  }
  const auto now = std::chrono::steady_clock::now();
  if (now - synced_ >= kJournalSyncInterval) {
    ::fsync(fd_);
    synced_ = now;
  }
}

}  // namespace gemmtune
