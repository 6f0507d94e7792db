// SPDX-License-Identifier: Apache-2.0
// A disk cache of compiled OpenCL program binaries, so that a configuration built once is never
// compiled again on the same device and driver. One file per build, named by a 128-bit hash of
// everything that changes the binary (source text, build options, device, driver); the file also
// records that identity, checked on load, and the build log (vendors print resource usage there).
// On a runtime that keeps its own cache of builds (PoCL) an entry holds no binary: exporting one
// would cost that runtime more than it saves, and a build from source is served from its cache.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace gemmtune {

struct DeviceInfo;

// 32 hex digits from two independent 64-bit hashes of `text`.
std::string hash_hex128(const std::string& text);
// The 64-bit FNV-1a hash of `text`.
uint64_t fnv1a64(const std::string& text);

class BinaryCache {
 public:
  struct Entry {
    // Empty in a source-only entry: the runtime's own cache holds the build.
    std::vector<unsigned char> binary;
    std::string build_log;
  };

  // `dir`: "" = $GEMMTUNE_BINARY_CACHE when set (a folder, or "none"), else
  // $XDG_CACHE_HOME/gemmtune (or ~/.cache/gemmtune); "none" disables the cache.
  explicit BinaryCache(const std::string& dir);

  static std::string default_dir();
  bool enabled() const { return !dir_.empty(); }
  const std::string& dir() const { return dir_; }

  // What identifies a build: the device, its driver, the options and the source.
  static std::string identity(const DeviceInfo& device, const std::string& options,
                              const std::string& source);
  static std::string key(const std::string& identity) { return hash_hex128(identity); }

  // The entry stored under `key` when its recorded identity matches, else nullopt. A corrupt
  // or foreign file is ignored (and logged at debug level).
  std::optional<Entry> load(const std::string& key, const std::string& identity) const;
  // Writes atomically; a failure (read-only folder, full disk) is logged, never thrown.
  void store(const std::string& key, const std::string& identity, const Entry& entry) const;
  // Deletes an entry that turned out unusable (e.g. the driver rejected the binary).
  void remove(const std::string& key) const;

  std::string path_of(const std::string& key) const;

  // Whether the device's runtime keeps its own cache of builds (PoCL, unless its cache is off),
  // so that the cache should keep source-only entries for it.
  static bool runtime_keeps_builds(const DeviceInfo& device);

 private:
  std::string dir_;
};

}  // namespace gemmtune
