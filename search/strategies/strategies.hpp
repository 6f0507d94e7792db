// SPDX-License-Identifier: Apache-2.0
// The registry of search strategies: name → description, documented options and factory.
// Each strategy lives in its own file (exhaustive.cpp, random.cpp, anneal.cpp, bayes.cpp).
#pragma once

#include <functional>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "search/strategies/searcher.hpp"

namespace gemmtune {

using OptionValues = std::map<std::string, std::string>;

struct StrategyInfo {
  std::string name;
  std::string description;
  std::vector<OptionSpec> options;
  std::function<std::unique_ptr<Searcher>(const SearchSpace&, uint64_t, const StrategyOptions&)>
      make;
};

const std::vector<StrategyInfo>& strategies();
// Throws Error listing the known strategies when `name` is none of them.
const StrategyInfo& find_strategy(const std::string& name);

// Parses "bayes.acquisition=lcb" items into options per strategy. An unknown strategy or option,
// or a malformed item, is an error naming it.
std::map<std::string, OptionValues> parse_strategy_options(const std::vector<std::string>& items);

// A searcher seeded with `seed` (mixed with the strategy's name).
std::unique_ptr<Searcher> make_searcher(const std::string& name, const SearchSpace& space,
                                        uint64_t seed, const OptionValues& options);

// Per-strategy declarations (each defined in the strategy's own file).
StrategyInfo exhaustive_strategy();
StrategyInfo random_strategy();
StrategyInfo anneal_strategy();
StrategyInfo bayes_strategy();

}  // namespace gemmtune
