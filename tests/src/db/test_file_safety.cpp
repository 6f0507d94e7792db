// Files shared between processes: a journal has one writer, a database write keeps the file's mode
// and refuses a read-only file, and figures a measurement cannot have are refused.
#include <catch2/catch.hpp>

#include <sys/stat.h>
#include <unistd.h>

#include <filesystem>

#include "src/core/error.hpp"
#include "src/core/json_util.hpp"
#include "src/db/database.hpp"
#include "src/db/file_lock.hpp"
#include "src/db/journal.hpp"
#include "tests/test_support.hpp"

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

mode_t mode_of(const std::string& path) {
  struct stat st {};
  ::stat(path.c_str(), &st);
  return st.st_mode & 07777;
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

TEST_CASE("an atomic write keeps the mode and refuses a read-only file", "[database]") {
  const std::string dir = test::temp_dir("atomic-mode");
  const std::string path = dir + "/f.txt";
  write_file_atomic(path, "one");
  ::chmod(path.c_str(), 0600);
  write_file_atomic(path, "two");
  CHECK(read_text_file(path) == "two");
  CHECK(mode_of(path) == 0600);

  // Through a symbolic link: the target is replaced, the link stays a link.
  const std::string link = dir + "/link.txt";
  std::filesystem::create_symlink(path, link);
  write_file_atomic(link, "three");
  CHECK(std::filesystem::is_symlink(link));
  CHECK(read_text_file(path) == "three");

  ::chmod(path.c_str(), 0444);
  CHECK_THROWS_WITH(write_file_atomic(path, "four"), Catch::Contains("read-only"));
  CHECK(read_text_file(path) == "three");
  CHECK_THROWS_WITH(check_writable_file(dir), Catch::Contains("is a folder"));
  CHECK_THROWS_WITH(check_writable_file(path + "/x"), Catch::Contains("not a folder"));
  CHECK_NOTHROW(check_writable_file(dir + "/new/deeper/file.json"));
}

TEST_CASE("a database refuses figures no measurement has", "[database]") {
  Database db;
  DatabaseEntry e;
  e.key.shape = {64, 64, 64};
  e.gflops = 10;
  e.time.median_ms = 0.05;
  CHECK(db.put(e, false) == PutOutcome::kAdded);
  auto negative = e;
  negative.time.cv = -0.5;
  CHECK_THROWS_WITH(db.put(negative, true), Catch::Contains("time.cv"));
  auto zero = e;
  zero.gflops = 0;
  CHECK_THROWS_WITH(db.put(zero, true), Catch::Contains("gflops"));
  auto timeless = e;
  timeless.time.runs = 5;
  timeless.time.median_ms = 0;
  CHECK_THROWS_WITH(db.put(timeless, true), Catch::Contains("time.median_ms"));
  // A failed entry (a bench that could not re-measure) carries no rate.
  auto failed = zero;
  failed.status = Status::kWrongResult;
  failed.time.median_ms = 0;
  CHECK_NOTHROW(db.put(failed, true));

  nlohmann::json j = db.to_json();
  j["entries"][0]["time"]["max_ms"] = -1.0;
  CHECK_THROWS_WITH(Database::from_json(j, "x.json"),
                    Catch::Contains("x.json") && Catch::Contains("entries[0].time.max_ms"));
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
