// SPDX-License-Identifier: Apache-2.0
// Files written whole or not at all: an atomic write keeps the file's mode, writes through a
// symbolic link to its target and refuses a read-only file; where a file cannot be written is
// said before any work.
#include <catch2/catch.hpp>

#include <sys/stat.h>

#include <filesystem>

#include "src/core/json_util.hpp"
#include "tests/test_support.hpp"

// The file's own namespace: the test files compile in unity batches.
namespace gemmtune_tests::src_core_test_json_util {

using namespace gemmtune;

namespace {

mode_t mode_of(const std::string& path) {
  struct stat st {};
  ::stat(path.c_str(), &st);
  return st.st_mode & 07777;
}

}  // namespace

TEST_CASE("an atomic write keeps the mode and refuses a read-only file", "[json_util]") {
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

}  // namespace gemmtune_tests::src_core_test_json_util
