// SPDX-License-Identifier: Apache-2.0
#include "search/strategies/space.hpp"

#include <algorithm>
#include <cmath>
#include <functional>
#include <limits>
#include <map>
#include <optional>
#include <set>
#include <unordered_map>

#include "src/core/error.hpp"

namespace gemmtune {

namespace {

// Combinations a rank index covers at most: 2^28 bits, 32 MiB and 16 MiB of counts (a GPU space
// of xgemm_fast has some 6e7).
constexpr uint64_t kMaxRankIndexCombinations = uint64_t(1) << 28;
constexpr unsigned kWordBits = 64;

}  // namespace

SearchSpace::SearchSpace(std::vector<Parameter> parameters,
                         const std::vector<Configuration>& configs)
    : SearchSpace(std::move(parameters)) {
  levels_.reserve(configs.size() * parameters_.size());
  if (present_.empty()) index_.reserve(configs.size());
  std::vector<int> row(parameters_.size());
  for (const auto& c : configs) add(c, row);
  finish_index();
}

SearchSpace::SearchSpace(std::vector<Parameter> parameters) : parameters_(std::move(parameters)) {
  const size_t np = parameters_.size();
  double cartesian = 1;
  for (size_t p = 0; p < np; ++p) {
    const auto& values = parameters_[p].values;
    if (values.empty() || values.size() > 255) {
      throw invalid_argument("parameter " + parameters_[p].name + " has " +
                             std::to_string(values.size()) + " values (1 to 255 supported)");
    }
    if (values.size() > 1) dims_.push_back(p);
    const auto [lo, hi] = std::minmax_element(values.begin(), values.end());
    const bool positive = *lo > 0;
    std::vector<double> scaled;
    for (int64_t v : values) {
      double s = 0;
      if (*hi != *lo) {
        s = positive ? (std::log2(double(v)) - std::log2(double(*lo))) /
                           (std::log2(double(*hi)) - std::log2(double(*lo)))
                     : double(v - *lo) / double(*hi - *lo);
      }
      scaled.push_back(s);
    }
    scaled_.push_back(std::move(scaled));
    cartesian *= double(values.size());
  }
  if (cartesian > 9.0e18) throw invalid_argument("search space too large to index");
  radix_.assign(np, 1);
  for (size_t p = np; p-- > 1;) radix_[p - 1] = radix_[p] * parameters_[p].values.size();
  // Where the product of the value counts is small enough, a bit per combination marks the rows
  // as they come (no hash map of millions of entries, a cache miss each, on the way).
  if (cartesian <= double(kMaxRankIndexCombinations)) {
    present_.assign(size_t((uint64_t(cartesian) + kWordBits - 1) / kWordBits), 0);
  }
  // The parameters in name order, the order a configuration (a map) lists them in.
  by_name_.resize(np);
  for (size_t p = 0; p < np; ++p) by_name_[p] = p;
  std::sort(by_name_.begin(), by_name_.end(),
            [&](size_t a, size_t b) { return parameters_[a].name < parameters_[b].name; });
}

bool SearchSpace::level_of(size_t p, int64_t v, std::vector<int>& row) const {
  const auto& values = parameters_[p].values;
  const auto pos = std::find(values.begin(), values.end(), v);
  if (pos == values.end()) return false;
  row[p] = int(pos - values.begin());
  return true;
}

void SearchSpace::add(const Configuration& c, std::vector<int>& row, bool same_names) {
  // A configuration of this space lists exactly its parameters, in name order: one walk.
  bool walked = c.size() == parameters_.size();
  size_t k = 0;
  for (auto it = c.begin(); walked && it != c.end(); ++it, ++k) {
    const size_t p = by_name_[k];
    walked = (same_names || it->first == parameters_[p].name) && level_of(p, it->second, row);
  }
  if (!walked) {
    for (size_t p = 0; p < parameters_.size(); ++p) {
      auto it = c.find(parameters_[p].name);
      if (it == c.end()) {
        throw invalid_argument("configuration " + to_string(c) + " has no value for " +
                               parameters_[p].name);
      }
      if (!level_of(p, it->second, row)) {
        throw invalid_argument("configuration " + to_string(c) + ": " + parameters_[p].name + "=" +
                               std::to_string(it->second) + " is not a value of the space");
      }
    }
  }
  const uint64_t key = key_of(row);
  if (!present_.empty()) {
    uint64_t& word = present_[key / kWordBits];
    const uint64_t bit = uint64_t(1) << (key % kWordBits);
    if (word & bit) return;  // a duplicate
    word |= bit;
  } else if (!index_.emplace(key, uint32_t(size_)).second) {
    return;  // a duplicate
  }
  for (int l : row) levels_.push_back(uint8_t(l));
  ++size_;
}

SearchSpace SearchSpace::from_param_space(const ParamSpace& space) {
  // Straight from the enumeration into levels: a GPU space holds a million configurations, and
  // a map of each, kept until the space is built, cost seconds and gigabytes.
  SearchSpace out(space.parameters());
  std::vector<int> row(out.parameters_.size());
  // The enumeration hands over one map whose values change, its names never: they are checked on
  // the first configuration only.
  bool first = true;
  space.for_each([&](const Configuration& c) {
    out.add(c, row, !first);
    first = false;
    return true;
  });
  out.finish_index();
  return out;
}

SearchSpace SearchSpace::from_configurations(const std::vector<Configuration>& configs) {
  std::map<std::string, std::set<int64_t>> values;
  for (const auto& c : configs) {
    for (const auto& [name, v] : c) values[name].insert(v);
  }
  std::vector<Parameter> params;
  for (const auto& [name, vs] : values) {
    Parameter p;
    p.name = name;
    p.values.assign(vs.begin(), vs.end());
    p.default_value = p.values.front();
    params.push_back(p);
  }
  return SearchSpace(params, configs);
}

uint64_t SearchSpace::row_key(size_t index) const {
  uint64_t key = 0;
  for (size_t p = 0; p < parameters_.size(); ++p) key += uint64_t(level(index, p)) * radix_[p];
  return key;
}

uint64_t SearchSpace::key_of(const std::vector<int>& levels) const {
  uint64_t key = 0;
  for (size_t p = 0; p < levels.size(); ++p) key += uint64_t(levels[p]) * radix_[p];
  return key;
}

void SearchSpace::finish_index() {
  if (present_.empty()) return;  // hashed: index_ is the index
  const size_t words = present_.size();
  before_word_.assign(words, 0);
  uint32_t count = 0;
  for (size_t w = 0; w < words; ++w) {
    before_word_[w] = count;
    count += uint32_t(__builtin_popcountll(present_[w]));
  }
  row_of_rank_.assign(size_, 0);
  for (size_t row = 0; row < size_; ++row) {
    const uint64_t key = row_key(row);
    const uint64_t word = present_[key / kWordBits];
    const uint64_t below = word & ((uint64_t(1) << (key % kWordBits)) - 1);
    row_of_rank_[before_word_[key / kWordBits] + uint32_t(__builtin_popcountll(below))] =
        uint32_t(row);
  }
}

std::optional<size_t> SearchSpace::find_levels(const std::vector<int>& levels) const {
  const uint64_t key = key_of(levels);
  if (!present_.empty()) {
    const uint64_t word = present_[key / kWordBits];
    const uint64_t bit = uint64_t(1) << (key % kWordBits);
    if (!(word & bit)) return std::nullopt;
    return row_of_rank_[before_word_[key / kWordBits] +
                        uint32_t(__builtin_popcountll(word & (bit - 1)))];
  }
  auto it = index_.find(key);
  if (it == index_.end()) return std::nullopt;
  return it->second;
}

Configuration SearchSpace::config(size_t index) const {
  Configuration c;
  for (size_t p = 0; p < parameters_.size(); ++p) {
    c[parameters_[p].name] = parameters_[p].values[level(index, p)];
  }
  return c;
}

std::optional<size_t> SearchSpace::index_of(const Configuration& config) const {
  if (config.size() != parameters_.size()) return std::nullopt;
  std::vector<int> row(parameters_.size());
  for (size_t p = 0; p < parameters_.size(); ++p) {
    auto it = config.find(parameters_[p].name);
    if (it == config.end() || !level_of(p, it->second, row)) return std::nullopt;
  }
  return find_levels(row);
}

void SearchSpace::encode(size_t index, double* out) const {
  for (size_t d = 0; d < dims_.size(); ++d) out[d] = scaled_[dims_[d]][level(index, dims_[d])];
}

namespace {

// A feature's values scaled to [0,1] as floats: log2 between the extremes where all are positive,
// else linearly; 0 where they are all equal.
std::vector<float> scaled_feature(const std::vector<double>& raw) {
  const auto [lo_it, hi_it] = std::minmax_element(raw.begin(), raw.end());
  const double lo = raw.empty() ? 0 : *lo_it, hi = raw.empty() ? 0 : *hi_it;
  const bool use_log = lo > 0;
  const double a = use_log ? std::log2(lo) : lo, b = use_log ? std::log2(hi) : hi;
  std::vector<float> out(raw.size());
  for (size_t i = 0; i < raw.size(); ++i) {
    const double v = use_log ? std::log2(raw[i]) : raw[i];
    out[i] = b > a ? float((v - a) / (b - a)) : 0.0f;
  }
  return out;
}

// Combinations of a formula's inputs memoized in an array (beyond it, in a hash map).
constexpr uint64_t kDenseMemo = uint64_t(1) << 20;

}  // namespace

void SearchSpace::add_feature(const std::string& name, const std::vector<double>& raw) {
  if (raw.size() != size_) {
    throw Error(ErrorCode::kInternal, "feature " + name + " has " + std::to_string(raw.size()) +
                                          " values for " + std::to_string(size_) + " rows");
  }
  append_features({name}, {scaled_feature(raw)});
}

void SearchSpace::append_features(const std::vector<std::string>& names,
                                  const std::vector<std::vector<float>>& columns) {
  if (names.empty()) return;
  const size_t old_f = feature_names_.size(), new_f = old_f + names.size();
  std::vector<float> merged(size_ * new_f);
  for (size_t i = 0; i < size_; ++i) {
    for (size_t f = 0; f < old_f; ++f) merged[i * new_f + f] = features_[i * old_f + f];
    for (size_t c = 0; c < columns.size(); ++c) merged[i * new_f + old_f + c] = columns[c][i];
  }
  features_ = std::move(merged);
  feature_names_.insert(feature_names_.end(), names.begin(), names.end());
}

size_t SearchSpace::add_spec_features(const KernelSpec& spec, const Context& context) {
  // The formulas: the derived values, then the resources (an empty expression is the default the
  // spec gives it: a work-group of 1, no local memory, unknown registers).
  struct Formula {
    std::string name;
    const Expression* expr;
    std::optional<int64_t> if_empty;
  };
  std::vector<Formula> formulas;
  for (const auto& d : spec.derived()) formulas.push_back({d.name, &d.expr, std::nullopt});
  formulas.push_back({"work_group_size", &spec.work_group_expression(), int64_t{1}});
  formulas.push_back({"local_memory_bytes", &spec.local_memory_expression(), int64_t{0}});
  formulas.push_back({"registers", &spec.registers_expression(), std::nullopt});
  // The parameters a formula reads, through derived values: its value is a function of their
  // levels alone, so each combination of those is evaluated once (a GPU space of a million
  // configurations has a few hundred at most per formula).
  std::map<std::string, size_t> parameter_index;
  for (size_t p = 0; p < parameters_.size(); ++p) parameter_index[parameters_[p].name] = p;
  // One formula at a time (a GPU space has millions of rows: all raw values at once would be
  // gigabytes); the kept ones are added together.
  std::vector<std::string> names;
  std::vector<std::vector<float>> columns;
  std::vector<double> raw(size_);
  for (const Formula& formula : formulas) {
    bool usable = size_ > 0;
    if (formula.expr->empty()) {
      usable = usable && formula.if_empty.has_value();
      if (usable) std::fill(raw.begin(), raw.end(), double(*formula.if_empty));
    } else {
      std::vector<size_t> read;
      for (const auto& input : spec.inputs(*formula.expr)) {
        if (auto it = parameter_index.find(input); it != parameter_index.end()) {
          read.push_back(it->second);
        }
      }
      // The combination of the read parameters' levels, numbered densely.
      std::vector<uint64_t> radix(read.size());
      uint64_t combinations = 1;
      for (size_t r = read.size(); r-- > 0;) {
        radix[r] = combinations;
        combinations *= parameters_[read[r]].values.size();
      }
      std::vector<std::optional<int64_t>> dense(combinations <= kDenseMemo ? combinations : 0);
      std::vector<bool> known(dense.size(), false);
      std::unordered_map<uint64_t, std::optional<int64_t>> sparse;
      for (size_t i = 0; i < size_ && usable; ++i) {
        uint64_t key = 0;
        for (size_t r = 0; r < read.size(); ++r) key += uint64_t(level(i, read[r])) * radix[r];
        const std::optional<int64_t>* value = nullptr;
        if (!dense.empty()) {
          if (!known[key]) {
            dense[key] = spec.evaluate(*formula.expr, config(i), context);
            known[key] = true;
          }
          value = &dense[key];
        } else {
          auto it = sparse.find(key);
          if (it == sparse.end()) {
            it = sparse.emplace(key, spec.evaluate(*formula.expr, config(i), context)).first;
          }
          value = &it->second;
        }
        usable = value->has_value();
        if (usable) raw[i] = double(**value);
      }
    }
    if (!usable) continue;
    if (std::all_of(raw.begin(), raw.end(), [&](double v) { return v == raw[0]; })) continue;
    // A feature equal to a parameter adds nothing.
    bool duplicate = false;
    for (size_t p = 0; p < parameters_.size() && !duplicate; ++p) {
      bool same = true;
      for (size_t i = 0; i < size_ && same; ++i) {
        same = raw[i] == double(parameters_[p].values[level(i, p)]);
      }
      duplicate = same;
    }
    if (duplicate) continue;
    names.push_back(formula.name);
    columns.push_back(scaled_feature(raw));
  }
  append_features(names, columns);
  return names.size();
}

void SearchSpace::encode_with_features(size_t index, double* out) const {
  encode(index, out);
  const size_t nf = feature_names_.size();
  for (size_t f = 0; f < nf; ++f) out[dims_.size() + f] = features_[index * nf + f];
}

std::vector<size_t> SearchSpace::neighbours(size_t index) const {
  std::vector<int> row(parameters_.size());
  for (size_t p = 0; p < row.size(); ++p) row[p] = level(index, p);
  std::vector<size_t> out;
  for (size_t p : dims_) {
    const int n = int(parameters_[p].values.size());
    const int orig = row[p];
    for (int step : {-1, 1}) {
      const int l = orig + step;
      if (l < 0 || l >= n) continue;
      row[p] = l;
      if (auto i = find_levels(row)) out.push_back(*i);
    }
    row[p] = orig;
  }
  return out;
}

std::vector<size_t> SearchSpace::second_neighbours(size_t index) const {
  std::vector<int> row(parameters_.size());
  for (size_t p = 0; p < row.size(); ++p) row[p] = level(index, p);
  std::vector<size_t> out;
  for (size_t a = 0; a < dims_.size(); ++a) {
    for (size_t b = a + 1; b < dims_.size(); ++b) {
      const size_t pa = dims_[a], pb = dims_[b];
      const int oa = row[pa], ob = row[pb];
      for (int sa : {-1, 1}) {
        for (int sb : {-1, 1}) {
          const int la = oa + sa, lb = ob + sb;
          if (la < 0 || lb < 0 || la >= int(parameters_[pa].values.size()) ||
              lb >= int(parameters_[pb].values.size())) {
            continue;
          }
          row[pa] = la;
          row[pb] = lb;
          if (auto i = find_levels(row)) out.push_back(*i);
        }
      }
      row[pa] = oa;
      row[pb] = ob;
    }
  }
  return out;
}

}  // namespace gemmtune
