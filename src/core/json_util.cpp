// SPDX-License-Identifier: Apache-2.0
#include "src/core/json_util.hpp"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <atomic>
#include <cctype>
#include <cerrno>
#include <chrono>
#include <csignal>
#include <cstdio>
#include <cstring>
#include <filesystem>

#include "src/core/error.hpp"

namespace gemmtune {

namespace {

std::string file_kind(mode_t mode) {
  if (S_ISDIR(mode)) return "a folder";
  if (S_ISFIFO(mode)) return "a FIFO";
  if (S_ISCHR(mode) || S_ISBLK(mode)) return "a device";
  if (S_ISSOCK(mode)) return "a socket";
  return "not a regular file";
}

// A chunk of a bounded read.
constexpr size_t kReadChunk = size_t{1} << 16;

}  // namespace

void require_regular_file(int fd, const std::string& path) {
  struct stat st {};
  if (::fstat(fd, &st) != 0 || !S_ISREG(st.st_mode)) {
    const std::string kind = file_kind(st.st_mode);
    ::close(fd);
    throw invalid_file(path, "is " + kind + ", not a regular file; not used");
  }
  // Opened without blocking (a FIFO would wait for its other end); regular files block as usual.
  ::fcntl(fd, F_SETFL, ::fcntl(fd, F_GETFL) & ~O_NONBLOCK);
}

int open_regular_file(const std::string& path) {
  const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC | O_NONBLOCK);
  if (fd < 0) throw invalid_file(path, std::string("cannot open: ") + std::strerror(errno));
  require_regular_file(fd, path);
  return fd;
}

std::string read_text_file(const std::string& path, uint64_t limit) {
  const int fd = open_regular_file(path);
  std::string out;
  char buf[kReadChunk];
  while (true) {
    const ssize_t n = ::read(fd, buf, sizeof buf);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) {
      const int err = errno;
      ::close(fd);
      throw invalid_file(path, std::string("cannot read: ") + std::strerror(err));
    }
    if (n == 0) break;
    // Checked as it grows: the size stat reports may be wrong (procfs) or change meanwhile.
    if (out.size() + static_cast<size_t>(n) > limit) {
      ::close(fd);
      throw invalid_file(path, "is larger than " + std::to_string(limit >> 20) +
                                   " MiB, the most gemmtune reads of such a file; not read");
    }
    out.append(buf, static_cast<size_t>(n));
  }
  ::close(fd);
  return out;
}

std::string describe_out_of_range(const std::string& text, const nlohmann::json::exception& e) {
  // The message quotes the number: "number overflow parsing '1e999'".
  std::string what = e.what();
  std::string token;
  if (const auto q = what.find('\''); q != std::string::npos) {
    const auto end = what.find('\'', q + 1);
    if (end != std::string::npos) token = what.substr(q + 1, end - q - 1);
  }
  // The parser reads left to right, so the first occurrence of the token as a whole number is the
  // one that failed; the key before it is the field.
  auto number_char = [](char c) {
    return std::isdigit(static_cast<unsigned char>(c)) || c == '-' || c == '+' || c == '.' ||
           c == 'e' || c == 'E';
  };
  size_t at = std::string::npos;
  for (size_t p = token.empty() ? std::string::npos : text.find(token); p != std::string::npos;
       p = text.find(token, p + 1)) {
    const bool starts = p == 0 || !number_char(text[p - 1]);
    const bool ends = p + token.size() >= text.size() || !number_char(text[p + token.size()]);
    if (starts && ends) {
      at = p;
      break;
    }
  }
  if (at == std::string::npos) return "a number is out of range: " + what;
  size_t line = 1, col = 1;
  for (size_t i = 0; i < at; ++i) {
    if (text[i] == '\n') {
      ++line;
      col = 1;
    } else {
      ++col;
    }
  }
  // The name before position `p` when a colon ends what precedes it ("name": here), else "".
  auto key_before = [&text](size_t p) {
    while (p > 0 && std::isspace(static_cast<unsigned char>(text[p - 1]))) --p;
    if (p == 0 || text[p - 1] != ':') return std::string();
    const size_t close = text.rfind('"', p - 1);
    const size_t open =
        close == std::string::npos || close == 0 ? std::string::npos : text.rfind('"', close - 1);
    return open == std::string::npos ? std::string() : text.substr(open + 1, close - open - 1);
  };
  std::string field = key_before(at);
  bool element = false;
  if (field.empty()) {
    // An element of an array ("runtimes": [1.8, 1e999]): the array's name, before the bracket
    // that opens it. The scan does not skip strings: a bracket inside one may hide the name.
    int depth = 0;
    for (size_t p = at; p > 0; --p) {
      const char c = text[p - 1];
      if (c == ']' || c == '}') ++depth;
      if ((c == '[' || c == '{') && depth-- == 0) {
        element = c == '[';
        if (element) field = key_before(p - 1);
        break;
      }
    }
  }
  const std::string named = field.empty() ? std::string("a value")
                            : element     ? "an element of field '" + field + "'"
                                          : "field '" + field + "'";
  return named + " at line " + std::to_string(line) + ", column " + std::to_string(col) +
         ": number " + token + " is out of range";
}

nlohmann::json parse_json_text(const std::string& text, const std::string& origin) {
  try {
    return nlohmann::json::parse(text);
  } catch (const nlohmann::json::out_of_range& e) {
    throw invalid_file(origin, describe_out_of_range(text, e));
  } catch (const nlohmann::json::parse_error& e) {
    // e.byte is the position of the error; give line and column as well.
    size_t line = 1, col = 1;
    for (size_t i = 0; i + 1 < e.byte && i < text.size(); ++i) {
      if (text[i] == '\n') {
        ++line;
        col = 1;
      } else {
        ++col;
      }
    }
    std::string what = e.what();
    if (auto p = what.find("syntax error"); p != std::string::npos) what = what.substr(p);
    throw invalid_file(origin, "not valid JSON at line " + std::to_string(line) + ", column " +
                                   std::to_string(col) + " (byte " + std::to_string(e.byte) +
                                   "): " + what);
  }
}

nlohmann::json read_json_file(const std::string& path) {
  return parse_json_text(read_text_file(path), path);
}

namespace {

// The file a write of `path` replaces: the target of a symbolic link, so that renaming the new
// content into place keeps the link (and writes where it points) instead of replacing it.
std::string write_target(const std::string& path) {
  std::error_code ec;
  if (std::filesystem::is_symlink(path, ec)) {
    const auto target = std::filesystem::weakly_canonical(path, ec);
    if (!ec) return target.string();
  }
  return path;
}

// Refuses what rename() would silently get wrong: a folder, or a file whose mode forbids writing
// (rename would replace it regardless; root would too). Returns the existing file's mode, or -1
// for a new file.
int check_existing(const std::string& path) {
  struct stat st {};
  if (::stat(path.c_str(), &st) != 0) return -1;
  if (S_ISDIR(st.st_mode)) throw invalid_file(path, "is a folder, not a file");
  if ((st.st_mode & (S_IWUSR | S_IWGRP | S_IWOTH)) == 0) {
    throw invalid_file(path, "is read-only; not replaced (make it writable to update it)");
  }
  return static_cast<int>(st.st_mode & 07777);
}

std::atomic<unsigned> g_temp_counter{0};

// How old a temporary file of a dead process must be before it is removed: a process on another
// machine sharing the folder (whose pid means nothing here) finishes a write well within it.
constexpr auto kStaleTempAge = std::chrono::minutes(10);

// The pid in a temporary file name of `target` ("<name>.tmp.<pid>.<n>"), or 0.
pid_t temp_owner(const std::string& name, const std::string& target) {
  const std::string prefix = target + ".tmp.";
  if (name.compare(0, prefix.size(), prefix) != 0) return 0;
  const std::string rest = name.substr(prefix.size());
  const auto dot = rest.find('.');
  if (dot == 0 || dot == std::string::npos || dot + 1 == rest.size()) return 0;
  const auto digits = [](const std::string& t) {
    return t.find_first_not_of("0123456789") == std::string::npos;
  };
  if (!digits(rest.substr(0, dot)) || !digits(rest.substr(dot + 1)) || dot > 9) return 0;
  return static_cast<pid_t>(std::stol(rest.substr(0, dot)));
}

}  // namespace

void check_writable_file(const std::string& raw) {
  namespace fs = std::filesystem;
  const std::string path = write_target(raw);
  check_existing(path);
  // The temporary file goes into the same folder: the nearest existing ancestor must be a
  // writable folder (the missing ones are created on writing).
  fs::path dir = fs::path(path).parent_path();
  if (dir.empty()) dir = ".";
  std::error_code ec;
  while (!fs::exists(dir, ec) && dir.has_parent_path() && dir.parent_path() != dir) {
    dir = dir.parent_path();
  }
  if (!fs::is_directory(dir, ec)) {
    throw invalid_file(raw, "cannot be written: " + dir.string() + " is not a folder");
  }
  if (::access(dir.c_str(), W_OK | X_OK) != 0) {
    throw invalid_file(raw,
                       "cannot be written: folder " + dir.string() + ": " + std::strerror(errno));
  }
}

void write_file_atomic(const std::string& raw, const std::string& content) {
  const std::string path = write_target(raw);
  const int mode = check_existing(path);
  // Unique per writer: threads of one process (the binary cache) may write the same file at once.
  const std::string tmp = path + ".tmp." + std::to_string(::getpid()) + "." +
                          std::to_string(g_temp_counter.fetch_add(1));
  const int fd = ::open(tmp.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
  if (fd < 0) throw invalid_file(raw, std::string("cannot write: ") + std::strerror(errno));
  // The replacement keeps the mode of the file it replaces (a group-writable database stays so).
  if (mode >= 0) ::fchmod(fd, static_cast<mode_t>(mode));
  size_t done = 0;
  while (done < content.size()) {
    const ssize_t n = ::write(fd, content.data() + done, content.size() - done);
    if (n < 0) {
      if (errno == EINTR) continue;
      const int err = errno;
      ::close(fd);
      ::unlink(tmp.c_str());
      throw invalid_file(raw, std::string("cannot write: ") + std::strerror(err));
    }
    done += static_cast<size_t>(n);
  }
  // A full disk may show only here; a file renamed into place must be whole.
  const int synced = ::fsync(fd) == 0 ? 0 : errno;
  const int closed = ::close(fd) == 0 ? 0 : errno;
  if (synced != 0 || closed != 0) {
    const int err = synced != 0 ? synced : closed;
    ::unlink(tmp.c_str());
    throw invalid_file(raw, std::string("cannot write: ") + std::strerror(err));
  }
  if (std::rename(tmp.c_str(), path.c_str()) != 0) {
    const int err = errno;
    ::unlink(tmp.c_str());
    throw invalid_file(path, std::string("cannot rename into place: ") + std::strerror(err));
  }
}

void remove_stale_temporaries(const std::string& raw) {
  namespace fs = std::filesystem;
  const fs::path target(write_target(raw));
  const fs::path dir = target.parent_path().empty() ? fs::path(".") : target.parent_path();
  const std::string name = target.filename().string();
  std::error_code ec;
  for (const auto& e : fs::directory_iterator(dir, ec)) {
    const pid_t pid = temp_owner(e.path().filename().string(), name);
    if (pid <= 0 || pid == ::getpid() || !e.is_regular_file(ec)) continue;
    if (::kill(pid, 0) == 0 || errno != ESRCH) continue;  // alive, or not ours to ask
    const auto written = fs::last_write_time(e.path(), ec);
    if (ec || fs::file_time_type::clock::now() - written < kStaleTempAge) continue;
    fs::remove(e.path(), ec);
  }
}

void write_json_atomic(const std::string& path, const nlohmann::json& j) {
  write_file_atomic(path, j.dump(2) + "\n");
}

std::string require_string(const nlohmann::json& j, const std::string& field,
                           const std::string& origin) {
  if (!j.is_object() || !j.contains(field) || !j[field].is_string()) {
    throw invalid_file(origin, "field '" + field + "' must be a string");
  }
  return j[field].get<std::string>();
}

}  // namespace gemmtune
