// SPDX-License-Identifier: Apache-2.0
#include "search/strategies/strategies.hpp"

#include "src/core/error.hpp"

namespace gemmtune {

const std::vector<StrategyInfo>& strategies() {
  static const std::vector<StrategyInfo> all = {exhaustive_strategy(), random_strategy(),
                                                bayes_strategy(), anneal_strategy()};
  return all;
}

const StrategyInfo& find_strategy(const std::string& name) {
  std::string known;
  for (const auto& s : strategies()) {
    if (s.name == name) return s;
    known += (known.empty() ? "" : ", ") + s.name;
  }
  throw invalid_argument("unknown strategy '" + name + "' (known: " + known + ")");
}

std::map<std::string, OptionValues> parse_strategy_options(const std::vector<std::string>& items) {
  std::map<std::string, OptionValues> out;
  for (const auto& item : items) {
    const auto dot = item.find('.');
    const auto eq = item.find('=');
    if (dot == std::string::npos || eq == std::string::npos || dot > eq || dot == 0 ||
        eq == dot + 1) {
      throw invalid_argument("strategy option '" + item +
                             "' is not STRATEGY.NAME=VALUE (e.g. bayes.acquisition=lcb)");
    }
    const std::string strategy = item.substr(0, dot);
    const std::string name = item.substr(dot + 1, eq - dot - 1);
    const auto& info = find_strategy(strategy);
    // Constructing the options checks the name against the strategy's declared options.
    OptionValues values = out[strategy];
    values[name] = item.substr(eq + 1);
    StrategyOptions check(strategy, info.options, values);
    out[strategy] = values;
  }
  return out;
}

std::unique_ptr<Searcher> make_searcher(const std::string& name, const SearchSpace& space,
                                        uint64_t seed, const OptionValues& options) {
  const auto& info = find_strategy(name);
  return info.make(space, mix_seed(seed, name), StrategyOptions(name, info.options, options));
}

}  // namespace gemmtune
