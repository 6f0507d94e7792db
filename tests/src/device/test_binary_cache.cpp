// SPDX-License-Identifier: Apache-2.0
// The on-disk binary cache (no device needed).
#include <catch2/catch.hpp>

#include <cstdlib>
#include <filesystem>
#include <fstream>

#include "src/device/binary_cache.hpp"
#include "src/device/device.hpp"
#include "tests/test_support.hpp"

// The file's own namespace: the test files compile in unity batches.
namespace gemmtune_tests::src_device_test_binary_cache {

using namespace gemmtune;

TEST_CASE("binary cache keys are stable and sensitive to every input", "[binary_cache]") {
  DeviceInfo d;
  d.name = "dev";
  d.driver_version = "1.0";
  const auto id = BinaryCache::identity(d, "-DMWG=64", "kernel source");
  CHECK(BinaryCache::key(id) ==
        BinaryCache::key(BinaryCache::identity(d, "-DMWG=64", "kernel source")));
  CHECK(BinaryCache::key(id).size() == 32);
  CHECK(BinaryCache::key(id) !=
        BinaryCache::key(BinaryCache::identity(d, "-DMWG=32", "kernel source")));
  CHECK(BinaryCache::key(id) !=
        BinaryCache::key(BinaryCache::identity(d, "-DMWG=64", "kernel sourcf")));
  DeviceInfo d2 = d;
  d2.driver_version = "1.1";
  CHECK(BinaryCache::key(id) !=
        BinaryCache::key(BinaryCache::identity(d2, "-DMWG=64", "kernel source")));
  CHECK(hash_hex128("") != hash_hex128(" "));
}

TEST_CASE("binary cache stores, checks identity and ignores damage", "[binary_cache]") {
  const std::string dir = test::temp_dir("bincache");
  const BinaryCache cache(dir);
  REQUIRE(cache.enabled());
  const std::string id = "identity one", key = BinaryCache::key(id);
  CHECK_FALSE(cache.load(key, id));
  const BinaryCache::Entry e{{1, 2, 3, 0, 255}, "ptxas info: Used 12 registers\n"};
  cache.store(key, id, e);
  auto got = cache.load(key, id);
  REQUIRE(got);
  CHECK(got->binary == e.binary);
  CHECK(got->build_log == e.build_log);
  // Another identity under the same name (a collision or a foreign file) is not used.
  CHECK_FALSE(cache.load(key, "identity two"));
  // A truncated file is ignored, not trusted.
  const std::string path = cache.path_of(key);
  const auto size = std::filesystem::file_size(path);
  std::filesystem::resize_file(path, size - 2);
  CHECK_FALSE(cache.load(key, id));
  std::ofstream(path) << "garbage";
  CHECK_FALSE(cache.load(key, id));
  cache.remove(key);
  CHECK_FALSE(std::filesystem::exists(path));
  // No temporary files are left behind.
  for (const auto& f : std::filesystem::directory_iterator(cache.dir())) {
    CHECK(f.path().string().find(".tmp.") == std::string::npos);
  }
}

TEST_CASE("binary cache replaces an entry whole and never throws on a folder it cannot write",
          "[binary_cache]") {
  const std::string dir = test::temp_dir("bincache-replace");
  const BinaryCache cache(dir);
  REQUIRE(cache.enabled());
  const std::string id = "identity", key = BinaryCache::key(id);
  cache.store(key, id, BinaryCache::Entry{{1, 2, 3}, "first\n"});
  cache.store(key, id, BinaryCache::Entry{{4, 5}, "second\n"});
  auto got = cache.load(key, id);
  REQUIRE(got);
  CHECK(got->binary == std::vector<unsigned char>{4, 5});
  CHECK(got->build_log == "second\n");
  // The folder gone (a cleaned cache): the build goes on without its entry.
  std::filesystem::remove_all(cache.dir());
  CHECK_NOTHROW(cache.store(key, id, BinaryCache::Entry{{1}, ""}));
  CHECK_FALSE(cache.load(key, id));
}

TEST_CASE("a source-only entry keeps the build log without a binary", "[binary_cache]") {
  const BinaryCache cache(test::temp_dir("bincache-source"));
  REQUIRE(cache.enabled());
  const std::string id = "identity", key = BinaryCache::key(id);
  cache.store(key, id, BinaryCache::Entry{{}, "built from source\n"});
  auto got = cache.load(key, id);
  REQUIRE(got);
  CHECK(got->binary.empty());
  CHECK(got->build_log == "built from source\n");
  // A log cut short is still damage.
  const std::string path = cache.path_of(key);
  std::filesystem::resize_file(path, std::filesystem::file_size(path) - 1);
  CHECK_FALSE(cache.load(key, id));
}

TEST_CASE("source-only entries are kept for PoCL while its own cache is on", "[binary_cache]") {
  DeviceInfo pocl;
  pocl.platform_name = "Portable Computing Language";
  DeviceInfo nvidia;
  nvidia.platform_name = "NVIDIA CUDA";
  const char* saved = std::getenv("POCL_KERNEL_CACHE");
  const std::string before = saved ? saved : "";
  ::unsetenv("POCL_KERNEL_CACHE");
  CHECK(BinaryCache::runtime_keeps_builds(pocl));
  CHECK_FALSE(BinaryCache::runtime_keeps_builds(nvidia));
  ::setenv("POCL_KERNEL_CACHE", "0", 1);
  CHECK_FALSE(BinaryCache::runtime_keeps_builds(pocl));
  if (saved) {
    ::setenv("POCL_KERNEL_CACHE", before.c_str(), 1);
  } else {
    ::unsetenv("POCL_KERNEL_CACHE");
  }
}

TEST_CASE("binary cache can be disabled", "[binary_cache]") {
  const BinaryCache off("none");
  CHECK_FALSE(off.enabled());
  off.store("k", "i", BinaryCache::Entry{{1}, ""});
  CHECK_FALSE(off.load("k", "i"));
}

}  // namespace gemmtune_tests::src_device_test_binary_cache
