// SPDX-License-Identifier: Apache-2.0
#include "src/db/evaluation_cache.hpp"

#include <algorithm>
#include <cstdlib>
#include <filesystem>
#include <map>

#include <spdlog/spdlog.h>

#include "src/core/error.hpp"
#include "src/core/json_util.hpp"
#include "src/device/binary_cache.hpp"
#include "src/device/device.hpp"

namespace gemmtune {

namespace fs = std::filesystem;

namespace {

// A failure that says something about the configuration, not about this one run.
bool lasting(const Result& r) {
  return r.status != Status::kRunFailed;
}

// Whose results `journal` records: the identity of its header, "" when it has none it can read.
std::string recorded_identity(const Journal& journal) {
  if (journal.headers.empty()) return "";
  try {
    return journal.header(0).string_or("identity", "");
  } catch (const Error&) {
    return "";
  }
}

}  // namespace

std::string template_fingerprint(const std::string& templates_dir, const std::string& kernel) {
  std::vector<fs::path> files = {fs::path(templates_dir) / (kernel + ".json")};
  std::error_code ec;
  for (const auto& e : fs::directory_iterator(templates_dir, ec)) {
    if (e.path().extension() == ".cl") files.push_back(e.path());
  }
  std::sort(files.begin() + 1, files.end());
  std::string all;
  for (const auto& f : files)
    all += f.filename().string() + "\n" + read_text_file(f.string()) + "\n";
  return hash_hex128(all);
}

EvaluationCache::EvaluationCache(const std::string& dir, const DeviceInfo& device,
                                 std::string kernel, std::string fingerprint)
    : device_(device.name + "|" + device.driver_version + "|" + device.platform_version),
      kernel_(std::move(kernel)),
      fingerprint_(std::move(fingerprint)) {
  if (dir == "none") return;
  fs::path evaluations;
  if (const char* env = std::getenv("GEMMTUNE_EVALUATION_CACHE"); env && *env) {
    if (std::string(env) == "none") return;
    evaluations = env;
  } else {
    const std::string base = dir.empty() ? BinaryCache::default_dir() : dir;
    if (base.empty()) return;  // neither XDG_CACHE_HOME nor HOME: nothing to keep results in
    evaluations = fs::path(base) / "evaluations";
  }
  std::error_code ec;
  fs::create_directories(evaluations, ec);
  if (ec || !fs::is_directory(evaluations, ec)) {
    spdlog::warn("cannot create the evaluation cache folder {}: results not cached",
                 evaluations.string());
    return;
  }
  dir_ = evaluations.string();
}

std::string EvaluationCache::identity(const Problem& problem) const {
  return device_ + "|" + fingerprint_ + "|" + problem_key(kernel_, problem);
}

std::string EvaluationCache::path_of(const Problem& problem) const {
  return (fs::path(dir_) / (hash_hex128(identity(problem)) + ".jsonl")).string();
}

std::vector<Result> EvaluationCache::load(const Problem& problem) const {
  if (!enabled()) return {};
  const std::string path = path_of(problem);
  if (!fs::exists(path)) return {};
  Journal journal;
  try {
    journal = read_journal(path, JournalDamage::kSkip);
  } catch (const std::exception& e) {
    spdlog::warn("evaluation cache {} is unreadable ({}): ignored", path, e.what());
    return {};
  }
  if (journal.skipped_lines > 0) {
    spdlog::warn(
        "evaluation cache {}: {} damaged line(s) skipped; the next search of this "
        "problem rewrites the file",
        path, journal.skipped_lines);
  }
  // A hash collision or a hand-copied file must not pass off another problem's results.
  if (recorded_identity(journal) != identity(problem)) return {};
  const std::string key = problem_key(kernel_, problem);
  std::map<std::string, Result> latest;
  std::vector<std::string> order;
  for (const auto& e : journal.entries) {
    if (problem_key(e) != key || !lasting(e.result)) continue;
    const std::string c = configuration_to_json(e.result.config).dump();
    if (!latest.count(c)) order.push_back(c);
    latest[c] = e.result;
  }
  std::vector<Result> out;
  for (const auto& c : order) out.push_back(latest[c]);
  return out;
}

std::unique_ptr<JournalWriter> EvaluationCache::writer(const Problem& problem) const {
  if (!enabled()) return nullptr;
  const std::string path = path_of(problem);
  try {
    auto w = std::make_unique<JournalWriter>(path, JournalOpen::kAppend);
    // Read under the writer's lock. A new or empty file (what a full disk leaves), a header cut
    // short or damaged lines: the file is rewritten with its header and the records of this
    // problem it still holds, so that it is never left without a header for good.
    const Journal existing = read_journal(path, JournalDamage::kSkip);
    const std::string recorded = recorded_identity(existing);
    if (recorded != identity(problem) || existing.skipped_lines > 0) {
      std::vector<JournalEntry> kept;
      const std::string key = problem_key(kernel_, problem);
      for (const auto& e : existing.entries) {
        // Records under another problem's header are not this problem's, whatever they say.
        const bool ours = recorded.empty() || recorded == identity(problem);
        if (ours && problem_key(e) == key) kept.push_back(e);
      }
      if (!existing.entries.empty() || existing.skipped_lines > 0 || !recorded.empty()) {
        spdlog::warn("evaluation cache {} was damaged; rewritten with {} of its records", path,
                     kept.size());
      }
      w->rewrite({{"identity", identity(problem)}}, kept);
    }
    return w;
  } catch (const std::exception& e) {
    spdlog::warn("evaluation cache {}: {}; this search's results are not cached", path, e.what());
    return nullptr;
  }
}

}  // namespace gemmtune
