// SPDX-License-Identifier: Apache-2.0
#include "src/db/file_lock.hpp"

#include <fcntl.h>
#include <sys/file.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

#include <spdlog/spdlog.h>

#include "src/core/error.hpp"

namespace gemmtune {

namespace {

Error busy(const std::string& what) {
  return Error(ErrorCode::kBusy, what + " is in use by another gemmtune process (flock held); " +
                                     "wait for it to end or use another file");
}

// flock without waiting: true when locked, false when another holder has it.
bool try_lock(int fd, const std::string& path) {
  while (::flock(fd, LOCK_EX | LOCK_NB) != 0) {
    if (errno == EINTR) continue;
    if (errno == EWOULDBLOCK) return false;
    throw invalid_file(path, std::string("cannot lock: ") + std::strerror(errno));
  }
  return true;
}

}  // namespace

void lock_open_file(int fd, const std::string& path, const std::string& what) {
  if (!try_lock(fd, path)) throw busy(what);
}

FileLock::FileLock(const std::string& path, Wait wait, const std::string& what) : path_(path) {
  fd_ = ::open(path.c_str(), O_RDWR | O_CREAT | O_CLOEXEC, 0644);
  if (fd_ < 0) {
    throw invalid_file(path, std::string("cannot open lock file: ") + std::strerror(errno));
  }
  try {
    if (try_lock(fd_, path)) return;
    if (wait == Wait::kFail) throw busy(what);
    spdlog::info("waiting for {}: another gemmtune process is writing it", what);
    while (::flock(fd_, LOCK_EX) != 0) {
      if (errno == EINTR) continue;
      throw invalid_file(path, std::string("cannot lock: ") + std::strerror(errno));
    }
  } catch (...) {
    ::close(fd_);
    throw;
  }
}

FileLock::FileLock(FileLock&& other) noexcept : path_(std::move(other.path_)), fd_(other.fd_) {
  other.fd_ = -1;
}

FileLock::~FileLock() {
  // Closing the descriptor releases the lock.
  if (fd_ >= 0) ::close(fd_);
}

std::string database_lock_path(const std::string& db_path) {
  return db_path + ".lock";
}

}  // namespace gemmtune
