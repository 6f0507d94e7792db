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
                                 std::string fingerprint)
    : device_(device.name + "|" + device.driver_version + "|" + device.platform_version),
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
  return device_ + "|" + fingerprint_ + "|" + problem_key(problem);
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
    journal = read_journal(path);
  } catch (const std::exception& e) {
    spdlog::warn("evaluation cache {} is unreadable ({}): ignored", path, e.what());
    return {};
  }
  // A hash collision or a hand-copied file must not pass off another problem's results.
  if (journal.headers.empty() || journal.headers.front().value("identity", "") != identity(problem))
    return {};
  const std::string key = problem_key(problem);
  std::map<std::string, Result> latest;
  std::vector<std::string> order;
  for (const auto& e : journal.entries) {
    if (problem_key(e.problem) != key || !lasting(e.result)) continue;
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
    const bool fresh = !fs::exists(path);
    auto w = std::make_unique<JournalWriter>(path, JournalOpen::kAppend);
    if (fresh) w->write_header({{"identity", identity(problem)}});
    return w;
  } catch (const std::exception& e) {
    spdlog::warn("evaluation cache {}: {}; this search's results are not cached", path, e.what());
    return nullptr;
  }
}

}  // namespace gemmtune
