// SPDX-License-Identifier: Apache-2.0
// Exclusive advisory locks (flock) between gemmtune processes. A database is replaced through
// rename, so its lock lives on a side file (<db>.lock) that outlives every version of the
// database; a journal is only ever appended to, so it is locked itself.
#pragma once

#include <string>

namespace gemmtune {

class FileLock {
 public:
  enum class Wait {
    kBlock,  // wait for the holder to finish (short read-modify-write sections)
    kFail,   // throw Error(kBusy) at once (a file owned for the life of a process)
  };
  // Opens (creates) `path` and locks it exclusively. Errors name `path`; a busy file under
  // kFail names `what` (what the lock protects, e.g. "journal x.jsonl").
  FileLock(const std::string& path, Wait wait, const std::string& what);
  ~FileLock();
  FileLock(FileLock&& other) noexcept;
  FileLock& operator=(FileLock&&) = delete;
  FileLock(const FileLock&) = delete;
  FileLock& operator=(const FileLock&) = delete;

  const std::string& path() const { return path_; }

 private:
  std::string path_;
  int fd_ = -1;
};

// Locks `fd` (an open file) exclusively without waiting; throws Error(kBusy) naming `what` when
// another open file description holds the lock. Released when `fd` is closed.
void lock_open_file(int fd, const std::string& path, const std::string& what);

// The side file that serializes writers of the database `db_path`.
std::string database_lock_path(const std::string& db_path);

}  // namespace gemmtune
