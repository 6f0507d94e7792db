// SPDX-License-Identifier: Apache-2.0
#include "search/strategies/shard.hpp"

#include "src/core/error.hpp"

namespace gemmtune {

Shard Shard::parse(const std::string& text, const std::string& option) {
  const auto slash = text.find('/');
  try {
    if (slash != std::string::npos && slash > 0 && text[0] != '-' && text[slash + 1] != '-') {
      size_t used_i = 0, used_n = 0;
      const auto i = std::stoull(text.substr(0, slash), &used_i);
      const auto n = std::stoull(text.substr(slash + 1), &used_n);
      if (used_i == slash && used_n == text.size() - slash - 1 && n > 0 && i < n) return {i, n};
    }
  } catch (const std::exception&) {
  }
  throw invalid_argument(option + " '" + text + "' is not I/N with 0 <= I < N");
}

std::string Shard::to_string() const {
  return std::to_string(index) + "/" + std::to_string(count);
}

std::string Shard::tag() const {
  return "shard-" + std::to_string(index) + "of" + std::to_string(count);
}

std::string shard_path(const std::string& path, const Shard& shard) {
  if (!shard.split() || path.empty()) return path;
  const std::string tag = "-" + shard.tag();
  // The extension is kept last so that tools recognise the file; a journal has two.
  std::string stem = path, ext;
  for (const char* e : {".journal.jsonl", ".jsonl", ".json"}) {
    const std::string s = e;
    if (path.size() > s.size() && path.compare(path.size() - s.size(), s.size(), s) == 0) {
      stem = path.substr(0, path.size() - s.size());
      ext = s;
      break;
    }
  }
  if (stem.size() >= tag.size() && stem.compare(stem.size() - tag.size(), tag.size(), tag) == 0) {
    return path;
  }
  return stem + tag + ext;
}

SearchSpace shard_space(const SearchSpace& space, const Shard& shard) {
  if (!shard.split()) return space;
  std::vector<Configuration> mine;
  for (size_t i = 0; i < space.size(); ++i) {
    if (shard.owns(i)) mine.push_back(space.config(i));
  }
  return SearchSpace(space.parameters(), mine);
}

}  // namespace gemmtune
