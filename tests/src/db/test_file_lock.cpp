// SPDX-License-Identifier: Apache-2.0
// Files shared between processes: a journal has one writer at a time, and a database lock waits
// for its holder or fails with "busy".
#include <catch2/catch.hpp>

#include <filesystem>
#include <functional>

#include "src/core/error.hpp"
#include "src/db/database.hpp"
#include "src/db/file_lock.hpp"
#include "src/db/journal.hpp"
#include "tests/test_support.hpp"

// The file's own namespace: the test files compile in unity batches.
namespace gemmtune_tests::src_db_test_file_lock {

using namespace gemmtune;

namespace {

ErrorCode code_of(const std::function<void()>& f) {
  try {
    f();
  } catch (const Error& e) {
    return e.code();
  }
  FAIL("no Error thrown");
  return ErrorCode::kInternal;
}

}  // namespace

TEST_CASE("a journal has one writer at a time", "[journal]") {
  const std::string dir = test::temp_dir("journal-lock");
  const std::string path = dir + "/j.jsonl";
  {
    JournalWriter first(path, JournalOpen::kCreate);
    CHECK(code_of([&] { JournalWriter second(path, JournalOpen::kResume); }) == ErrorCode::kBusy);
    CHECK(code_of([&] { JournalWriter again(path, JournalOpen::kCreate); }) ==
          ErrorCode::kInvalidArgument);
  }
  // Free once the first writer is gone; a resumed journal must exist.
  CHECK_NOTHROW(JournalWriter(path, JournalOpen::kResume));
  CHECK(code_of([&] { JournalWriter(dir + "/none.jsonl", JournalOpen::kResume); }) ==
        ErrorCode::kInvalidFile);
  CHECK_FALSE(std::filesystem::exists(dir + "/none.jsonl"));
}

TEST_CASE("a database lock waits for its holder", "[database]") {
  const std::string dir = test::temp_dir("db-lock");
  const std::string lock = database_lock_path(dir + "/db.json");
  FileLock held(lock, FileLock::Wait::kBlock, "database");
  try {
    FileLock second(lock, FileLock::Wait::kFail, "database db.json");
    FAIL("locked twice");
  } catch (const Error& e) {
    CHECK(e.code() == ErrorCode::kBusy);
    CHECK_THAT(e.what(), Catch::Contains("database db.json"));
  }
}

}  // namespace gemmtune_tests::src_db_test_file_lock
