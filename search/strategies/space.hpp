// SPDX-License-Identifier: Apache-2.0
// The configurations a search visits, stored compactly: each valid configuration is a row of value
// indices ("levels"), one per parameter. Searchers work with row numbers; the space turns them into
// configurations, encodes them for models and finds their neighbours.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <unordered_map>
#include <vector>

#include "src/core/configuration.hpp"
#include "src/kernel/kernel_spec.hpp"

namespace gemmtune {

class SearchSpace {
 public:
  // `parameters` give each parameter's values in order (adjacent values are neighbours);
  // every configuration must use only those values.
  SearchSpace(std::vector<Parameter> parameters, const std::vector<Configuration>& configs);
  // Every valid configuration of a kernel's space on a device.
  static SearchSpace from_param_space(const ParamSpace& space);
  // A space made of recorded configurations: each parameter takes the sorted distinct values seen.
  static SearchSpace from_configurations(const std::vector<Configuration>& configs);

  size_t size() const { return size_; }
  const std::vector<Parameter>& parameters() const { return parameters_; }
  // Parameters with more than one value: the dimensions a model sees.
  const std::vector<size_t>& dimensions() const { return dims_; }

  Configuration config(size_t index) const;
  std::optional<size_t> index_of(const Configuration& config) const;
  int level(size_t index, size_t parameter) const {
    return levels_[index * parameters_.size() + parameter];
  }

  // The configuration encoded in [0,1]^dimensions(): log2 of the value scaled between the smallest
  // and largest value (linear scaling when a value is not positive).
  void encode(size_t index, double* out) const;

  // Extra model inputs computed from the configuration (e.g. a template's derived values such as
  // work per work-item or work-group size, which GEMM speed depends on more directly than on the
  // raw parameters), scaled like parameters. `raw` holds one value per row.
  void add_feature(const std::string& name, const std::vector<double>& raw);
  // The template's derived values and resource formulas that vary over the space and are not
  // already a parameter; returns how many were added.
  size_t add_spec_features(const KernelSpec& spec, const Context& context);
  const std::vector<std::string>& feature_names() const { return feature_names_; }
  // dimensions() followed by the features.
  void encode_with_features(size_t index, double* out) const;

  // Valid configurations that differ from `index` in one parameter moved to an adjacent value.
  std::vector<size_t> neighbours(size_t index) const;
  // Valid configurations that differ in two parameters, each moved to an adjacent value.
  std::vector<size_t> second_neighbours(size_t index) const;

 private:
  // The parameters' scaling and radices, no configuration yet.
  explicit SearchSpace(std::vector<Parameter> parameters);
  // Appends `c` (its levels go through `row`, scratch of one entry per parameter) unless it is
  // already in; invalid_argument for a missing parameter or a value outside the space.
  // `same_names`: `c` has the parameters' names, as the configuration before it had.
  void add(const Configuration& c, std::vector<int>& row, bool same_names = false);
  // Sets row[p] to the level of parameter p's value v; false when v is none of its values.
  bool level_of(size_t p, int64_t v, std::vector<int>& row) const;
  std::optional<size_t> find_levels(const std::vector<int>& levels) const;
  // Adds feature columns (scaled values, one per row) in one pass over the rows.
  void append_features(const std::vector<std::string>& names,
                       const std::vector<std::vector<float>>& columns);
  uint64_t key_of(const std::vector<int>& levels) const;
  uint64_t row_key(size_t index) const;  // key_of the levels of row `index`
  // Once every configuration is in: where the product of the value counts is small enough, the
  // bit per combination set by add() gets running counts and the row of each rank, in place of a
  // hash map (a strategy looks up thousands of neighbours a proposal; a hash lookup into millions
  // of entries is a cache miss each).
  void finish_index();

  std::vector<Parameter> parameters_;
  std::vector<size_t> dims_;
  std::vector<std::vector<double>> scaled_;  // per parameter, per level
  std::vector<uint8_t> levels_;              // size_ rows of parameters_.size()
  std::vector<uint64_t> radix_;
  std::vector<size_t> by_name_;                   // parameter indices in name order
  std::unordered_map<uint64_t, uint32_t> index_;  // key -> row, where there is no rank index
  // The rank index: combination bits, the rows before each word of them, the row of each rank.
  std::vector<uint64_t> present_;
  std::vector<uint32_t> before_word_;
  std::vector<uint32_t> row_of_rank_;
  size_t size_ = 0;
  std::vector<std::string> feature_names_;
  std::vector<float> features_;  // size_ rows of feature_names_.size(), scaled to [0,1]
};

}  // namespace gemmtune
