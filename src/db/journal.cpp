#include "src/db/journal.hpp"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <sstream>

#include <fmt/format.h>
#include <spdlog/spdlog.h>

#include "src/core/error.hpp"
#include "src/core/json_util.hpp"
#include "src/db/file_lock.hpp"
#include "src/db/file_text.hpp"

namespace gemmtune {

std::string problem_key(const Problem& p) {
  return fmt::format("{}|{}|{}|{}|{}|{}|{}|{}|{}", p.kernel, p.shape.to_string(), p.order_name(),
                     p.layout(), to_string(p.precision), p.alpha, p.beta, p.batch, p.epilogue);
}

void to_json(nlohmann::json& j, const JournalEntry& e) {
  j = {
      {"type", "result"}, {"problem", e.problem}, {"result", e.result}, {"elapsed_s", e.elapsed_s}};
}

void from_json(const nlohmann::json& j, JournalEntry& e) {
  e.problem = j.at("problem").get<Problem>();
  e.result = j.at("result").get<Result>();
  e.elapsed_s = j.value("elapsed_s", 0.0);
}

namespace {

// Every line of the file (gzip data inflated).
std::vector<std::string> read_lines(const std::string& path) {
  std::vector<std::string> lines;
  std::istringstream in(read_file_text(path));
  std::string line;
  while (std::getline(in, line)) lines.push_back(std::move(line));
  return lines;
}

}  // namespace

Journal read_journal(const std::string& path) {
  Journal j;
  j.path = path;
  const auto lines = read_lines(path);
  for (size_t i = 0; i < lines.size(); ++i) {
    const std::string& line = lines[i];
    if (line.find_first_not_of(" \t\r") == std::string::npos) continue;
    nlohmann::json record;
    try {
      record = nlohmann::json::parse(line);
    } catch (const nlohmann::json::out_of_range& e) {
      // Not a line cut short (that would be a syntax error): a damaged figure such as 1e999.
      throw invalid_file(path,
                         "line " + std::to_string(i + 1) + ": " + describe_out_of_range(line, e));
    } catch (const nlohmann::json::parse_error&) {
      ++j.skipped_lines;
      spdlog::warn("{}: line {} is not complete JSON (a write cut short?); skipped", path, i + 1);
      continue;
    }
    const std::string type = record.is_object() ? record.value("type", "") : "";
    try {
      if (type == "header") {
        j.headers.push_back(record);
      } else if (type == "result") {
        j.entries.push_back(record.get<JournalEntry>());
      } else {
        throw invalid_file(
            path, "line " + std::to_string(i + 1) + " is neither a header nor a result record");
      }
    } catch (const nlohmann::json::exception& e) {
      throw invalid_file(path, "line " + std::to_string(i + 1) + ": " + e.what());
    } catch (const Error& e) {
      if (type == "header" || type == "result") {
        throw invalid_file(path, "line " + std::to_string(i + 1) + ": " + e.what());
      }
      throw;
    }
  }
  if (j.headers.empty() && j.entries.empty()) throw invalid_file(path, "holds no journal record");
  return j;
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
  const int flags = O_WRONLY | O_APPEND | O_CLOEXEC |
                    (how == JournalOpen::kCreate   ? O_CREAT | O_EXCL
                     : how == JournalOpen::kAppend ? O_CREAT
                                                   : 0);
  fd_ = ::open(path.c_str(), flags, 0644);
  if (fd_ < 0 && errno == EEXIST) {
    throw invalid_argument("journal " + path + " already exists: continue it with --resume " +
                           path + ", or choose another file with --journal");
  }
  if (fd_ < 0)
    throw invalid_file(path, std::string("cannot open for writing: ") + std::strerror(errno));
  // Held until the writer closes: a second search on this journal (a second --resume) is refused
  // instead of measuring the same configurations again and interleaving its lines.
  try {
    lock_open_file(fd_, path, "journal " + path);
  } catch (...) {
    ::close(fd_);
    fd_ = -1;
    throw;
  }
  // A writer killed mid-line leaves no newline at the end; start on a fresh line.
  struct stat st {};
  if (::fstat(fd_, &st) == 0 && st.st_size > 0) {
    const int rfd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
    char last = '\n';
    if (rfd >= 0) {
      if (::pread(rfd, &last, 1, st.st_size - 1) != 1) last = '\n';
      ::close(rfd);
    }
    if (last != '\n' && ::write(fd_, "\n", 1) != 1) {
      const int err = errno;
      ::close(fd_);
      fd_ = -1;
      throw invalid_file(path, std::string("cannot write: ") + std::strerror(err));
    }
  }
}

JournalWriter::~JournalWriter() {
  if (fd_ >= 0) ::close(fd_);
}

void JournalWriter::write_header(nlohmann::json header) {
  header["type"] = "header";
  write_line(header);
}

void JournalWriter::append(const Problem& problem, const Result& result, double elapsed_s) {
  write_line(JournalEntry{problem, result, elapsed_s});
}

void JournalWriter::write_line(const nlohmann::json& j) {
  // One write() per record: with O_APPEND the line lands whole or (if killed) as a tail that the
  // reader skips; fsync makes it survive a crash of the machine as well.
  const std::string line = j.dump() + "\n";
  size_t done = 0;
  while (done < line.size()) {
    const ssize_t n = ::write(fd_, line.data() + done, line.size() - done);
    if (n < 0) {
      if (errno == EINTR) continue;
      throw invalid_file(path_, std::string("cannot write: ") + std::strerror(errno));
    }
    done += size_t(n);
  }
  ::fsync(fd_);
}

}  // namespace gemmtune
