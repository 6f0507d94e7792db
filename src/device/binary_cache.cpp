// SPDX-License-Identifier: Apache-2.0
#include "src/device/binary_cache.hpp"

#include <fcntl.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>

#include <spdlog/spdlog.h>
#include <nlohmann/json.hpp>

#include "src/core/error.hpp"
#include "src/core/json_util.hpp"
#include "src/device/device.hpp"

namespace gemmtune {

namespace fs = std::filesystem;

namespace {

constexpr const char* kMagic = "gemmtune-binary-cache 1";

// A second, structurally different hash (multiply-rotate per byte, then a final avalanche) so
// that the two halves of the key do not fail together.
uint64_t mix64(const std::string& text) {
  uint64_t h = 0x9e3779b97f4a7c15ull ^ text.size();
  for (unsigned char c : text) {
    h = (h ^ c) * 0xff51afd7ed558ccdull;
    h = (h << 31) | (h >> 33);
  }
  h ^= h >> 30;
  h *= 0xbf58476d1ce4e5b9ull;
  h ^= h >> 27;
  h *= 0x94d049bb133111ebull;
  h ^= h >> 31;
  return h;
}

std::string hex64(uint64_t v) {
  static const char* kDigits = "0123456789abcdef";
  std::string s(16, '0');
  for (int i = 15; i >= 0; --i, v >>= 4) s[static_cast<size_t>(i)] = kDigits[v & 0xf];
  return s;
}

// Writes `data` to a temporary file beside `path` and renames it into place, so that a reader
// sees the whole entry or none; the reason when it cannot. Unlike write_file_atomic it does not
// fsync: an entry lost or torn by a crash of the machine is a build done again (load() refuses a
// truncated entry, the driver a damaged binary), and a compile process stores one entry per
// build.
std::optional<std::string> write_unsynced(const std::string& path, const std::string& data) {
  static std::atomic<unsigned> counter{0};
  const std::string tmp =
      path + ".tmp." + std::to_string(::getpid()) + "." + std::to_string(counter.fetch_add(1));
  const int fd = ::open(tmp.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
  if (fd < 0) return std::string(std::strerror(errno));
  size_t done = 0;
  while (done < data.size()) {
    const ssize_t n = ::write(fd, data.data() + done, data.size() - done);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) {
      const std::string why = n < 0 ? std::strerror(errno) : "nothing written";
      ::close(fd);
      ::unlink(tmp.c_str());
      return why;
    }
    done += static_cast<size_t>(n);
  }
  if (::close(fd) != 0 || std::rename(tmp.c_str(), path.c_str()) != 0) {
    const std::string why = std::strerror(errno);
    ::unlink(tmp.c_str());
    return why;
  }
  return std::nullopt;
}

}  // namespace

uint64_t fnv1a64(const std::string& text) {
  uint64_t h = 0xcbf29ce484222325ull;
  for (unsigned char c : text) {
    h ^= c;
    h *= 0x100000001b3ull;
  }
  return h;
}

std::string hash_hex128(const std::string& text) {
  return hex64(fnv1a64(text)) + hex64(mix64(text));
}

std::string BinaryCache::default_dir() {
  if (const char* xdg = std::getenv("XDG_CACHE_HOME"); xdg && *xdg) {
    return (fs::path(xdg) / "gemmtune").string();
  }
  if (const char* home = std::getenv("HOME"); home && *home) {
    return (fs::path(home) / ".cache" / "gemmtune").string();
  }
  return "";
}

namespace {

// The variable names the kernel binaries' folder alone: the evaluation cache and the offline AMD
// builds keep theirs. PoCL, for one, keeps its own cache of builds, and exporting a binary there
// compiles a generic copy of every kernel of the program first, which costs more than the
// front end that a cached binary saves.
std::string configured_dir(const std::string& dir) {
  if (!dir.empty()) return dir;
  if (const char* env = std::getenv("GEMMTUNE_BINARY_CACHE"); env && *env) return env;
  return BinaryCache::default_dir();
}

}  // namespace

BinaryCache::BinaryCache(const std::string& dir) {
  const std::string base = configured_dir(dir);
  if (base == "none") return;
  if (base.empty()) {
    spdlog::warn("no cache folder (neither XDG_CACHE_HOME nor HOME is set): binaries not cached");
    return;
  }
  const fs::path kernels = fs::path(base) / "kernels";
  std::error_code ec;
  fs::create_directories(kernels, ec);
  if (ec || !fs::is_directory(kernels, ec)) {
    spdlog::warn("cannot create the binary cache folder {}: binaries not cached", kernels.string());
    return;
  }
  dir_ = kernels.string();
}

std::string BinaryCache::identity(const DeviceInfo& device, const std::string& options,
                                  const std::string& source) {
  // The source enters through its hash so that the identity stays short enough to store.
  return "device=" + device.name + "\nvendor=" + device.vendor +
         "\ndriver=" + device.driver_version + "\nplatform=" + device.platform_version +
         "\noptions=" + options + "\nsource=" + hash_hex128(source);
}

bool BinaryCache::runtime_keeps_builds(const DeviceInfo& device) {
  if (device.platform_name.find("Portable Computing Language") == std::string::npos) return false;
  const char* cache = std::getenv("POCL_KERNEL_CACHE");
  return !(cache && std::string(cache) == "0");
}

std::string BinaryCache::path_of(const std::string& key) const {
  return (fs::path(dir_) / (key + ".bin")).string();
}

// File layout: one line of JSON (magic, identity, sizes), then the build log, then the binary.
std::optional<BinaryCache::Entry> BinaryCache::load(const std::string& key,
                                                    const std::string& identity) const {
  if (!enabled()) return std::nullopt;
  const std::string path = path_of(key);
  std::error_code ec;
  if (!fs::is_regular_file(path, ec)) return std::nullopt;
  try {
    const std::string data = read_text_file(path);
    const size_t eol = data.find('\n');
    if (eol == std::string::npos) throw invalid_file(path, "no header line");
    const auto header = nlohmann::json::parse(data.substr(0, eol));
    if (header.value("magic", "") != kMagic) throw invalid_file(path, "not a cache file");
    if (header.value("identity", "") != identity) {
      spdlog::debug("binary cache: {} holds another build; ignored", path);
      return std::nullopt;
    }
    const size_t log_bytes = header.at("log_bytes").get<size_t>();
    const size_t binary_bytes = header.at("binary_bytes").get<size_t>();
    // binary_bytes 0: a source-only entry (runtime_keeps_builds).
    if (data.size() != eol + 1 + log_bytes + binary_bytes) {
      throw invalid_file(path, "truncated");
    }
    Entry e;
    e.build_log = data.substr(eol + 1, log_bytes);
    e.binary.assign(data.begin() + static_cast<std::ptrdiff_t>(eol + 1 + log_bytes), data.end());
    return e;
  } catch (const std::exception& e) {
    spdlog::debug("binary cache: ignoring {}: {}", path, e.what());
    return std::nullopt;
  }
}

void BinaryCache::store(const std::string& key, const std::string& identity,
                        const Entry& entry) const {
  if (!enabled()) return;
  nlohmann::json header = {{"magic", kMagic},
                           {"identity", identity},
                           {"log_bytes", entry.build_log.size()},
                           {"binary_bytes", entry.binary.size()}};
  std::string data = header.dump() + "\n" + entry.build_log;
  data.append(entry.binary.begin(), entry.binary.end());
  const std::string path = path_of(key);
  if (auto why = write_unsynced(path, data)) {
    spdlog::warn("binary cache: cannot store {}: {}", path, *why);
  }
}

void BinaryCache::remove(const std::string& key) const {
  if (!enabled()) return;
  std::error_code ec;
  fs::remove(path_of(key), ec);
}

}  // namespace gemmtune
