// SPDX-License-Identifier: Apache-2.0
// One part of a job split over several machines (`--shard I/N`): shard I of N takes every
// configuration whose enumeration index is I modulo N. The enumeration index is the row of the
// template's space in ParamSpace order, so the split needs no coordination: every machine with the
// same device (same limits, same space) computes the same parts, `compile --shard I/N` warms
// exactly what `search --shard I/N` measures, and the parts never overlap and miss nothing.
#pragma once

#include <cstdint>
#include <string>

#include "search/strategies/space.hpp"

namespace gemmtune {

struct Shard {
  uint64_t index = 0;
  uint64_t count = 1;

  // "I/N" with 0 <= I < N; anything else is invalid_argument naming `option`.
  static Shard parse(const std::string& text, const std::string& option = "--shard");
  bool split() const { return count > 1; }
  bool owns(uint64_t i) const { return i % count == index; }
  // "I/N", as given on the command line.
  std::string to_string() const;
  // "shard-IofN": what file names of this shard carry.
  std::string tag() const;
};

// `path` with "-shard-IofN" before its extension (".json", ".journal.jsonl", or none), unless it
// carries the tag already (a resumed shard names its own files); unchanged for an unsplit job.
std::string shard_path(const std::string& path, const Shard& shard);

// The rows of `space` this shard owns, in the same order (parameters and values unchanged).
SearchSpace shard_space(const SearchSpace& space, const Shard& shard);

}  // namespace gemmtune
