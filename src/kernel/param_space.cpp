// SPDX-License-Identifier: Apache-2.0
#include <algorithm>
#include <functional>
#include <map>
#include <set>
#include <unordered_map>

#include <fmt/format.h>

#include "src/core/error.hpp"
#include "src/kernel/kernel_spec.hpp"
#include "src/kernel/spec_limits.hpp"

namespace gemmtune {

// ---- ParamSpace ----

ParamSpace::ParamSpace(const KernelSpec& spec, const std::string& space_name, DeviceLimits limits,
                       Context context)
    : spec_(&spec), name_(space_name), limits_(std::move(limits)), context_(std::move(context)) {
  const SpaceDeclaration* decl = nullptr;
  if (space_name != "full") {
    auto it = spec.spaces().find(space_name);
    if (it == spec.spaces().end()) {
      std::string known = "full";
      for (const auto& [n, d] : spec.spaces()) known += ", " + n;
      throw invalid_argument("kernel " + spec.name() + " has no space '" + space_name +
                             "' (known: " + known + ")");
    }
    decl = &it->second;
  }
  for (const auto& p : spec.parameters()) {
    Parameter q = p;
    if (decl) {
      auto it = decl->values.find(p.name);
      if (it != decl->values.end()) {
        q.values = it->second;
      } else if (!decl->base_full) {
        q.values = {p.default_value};
      }
    }
    parameters_.push_back(q);
  }
  // A check runs as soon as every parameter it reads (directly or through derived values) is set.
  std::map<std::string, size_t> depth;
  for (size_t i = 0; i < parameters_.size(); ++i) depth[parameters_[i].name] = i;
  auto last_input = [&](const Expression& e) -> size_t {
    size_t d = 0;
    for (const auto& name : spec.inputs(e)) {
      if (auto it = depth.find(name); it != depth.end()) d = std::max(d, it->second);
    }
    return d;
  };
  checks_at_.resize(std::max<size_t>(parameters_.size(), 1));
  for (const auto& c : spec.constraints()) {
    checks_at_[last_input(c.expr)].push_back({&c.expr, c.reason, Check::Kind::kConstraint});
  }
  auto add_limit = [&](const Expression& e, const char* field, Check::Kind kind) {
    if (!e.empty()) checks_at_[last_input(e)].push_back({&e, field, kind});
  };
  add_limit(spec.local_memory_expression(), "local_memory_bytes", Check::Kind::kLocalMem);
  add_limit(spec.work_group_expression(), "work_group_size", Check::Kind::kWorkGroup);
  add_limit(spec.registers_expression(), "registers", Check::Kind::kRegisters);
  // Each declared local size within the device's max work-item size of its dimension (sizes
  // that read M, N or K depend on the problem and are checked when it is known).
  const auto& local = spec.launch().local;
  for (size_t d = 0; d < local.size() && d < limits_.max_work_item_sizes.size(); ++d) {
    if (limits_.max_work_item_sizes[d] <= 0 || reads_sizes(local[d])) continue;
    Check c{&local[d], "launch.local[" + std::to_string(d) + "] within max_work_item_sizes",
            Check::Kind::kWorkItems};
    c.dimension = d;
    checks_at_[last_input(local[d])].push_back(c);
  }
  if (!spec.register_cap_parameter().empty()) {
    auto e = std::make_shared<Expression>(Expression::parse(spec.register_cap_parameter()));
    owned_.push_back(e);
    checks_at_[last_input(*e)].push_back({e.get(), "register_cap", Check::Kind::kRegisterCap});
  }
  // Split-K in one launch, where the device refuses it (DeviceLimits::in_kernel_reduction_refused).
  const auto& split_k = spec.launch().split_k;
  if (!limits_.in_kernel_reduction_refused.empty() && split_k && !split_k->in_kernel.empty()) {
    auto e = std::make_shared<Expression>(Expression::parse("(" + split_k->parameter + " > 1) * (" +
                                                            split_k->in_kernel.text() + ")"));
    owned_.push_back(e);
    checks_at_[last_input(*e)].push_back(
        {e.get(), "split_k.in_kernel", Check::Kind::kInKernelReduction});
  }
  for (auto& checks : checks_at_) {
    for (auto& c : checks) {
      for (const auto& name : spec.inputs(*c.expr)) {
        if (auto it = depth.find(name); it != depth.end()) c.inputs.push_back(it->second);
      }
    }
  }
}

bool ParamSpace::passes(const Check& check, const Configuration& config) const {
  auto v = spec_->evaluate(*check.expr, config, context_);
  if (!v) return false;
  switch (check.kind) {
    case Check::Kind::kConstraint:
      return *v != 0;
    case Check::Kind::kLocalMem:
      return limits_.local_mem_bytes <= 0 || *v <= limits_.local_mem_bytes;
    case Check::Kind::kWorkGroup:
      return limits_.max_work_group_size <= 0 || *v <= limits_.max_work_group_size;
    case Check::Kind::kRegisters:
      return limits_.max_registers_per_thread <= 0 || *v <= limits_.max_registers_per_thread;
    case Check::Kind::kRegisterCap:
      return !cap_refused(*v, limits_);
    case Check::Kind::kWorkItems:
      return *v <= limits_.max_work_item_sizes[check.dimension];
    case Check::Kind::kInKernelReduction:
      return *v == 0;
  }
  return false;
}

void ParamSpace::for_each(const std::function<bool(const Configuration&)>& visit) const {
  if (cartesian_size() > kMaxEnumeratedCombinations) {
    std::string named;
    for (const auto& [n, d] : spec_->spaces()) named += (named.empty() ? "" : ", ") + n;
    throw invalid_argument(fmt::format(
        "space '{}' of kernel {} has {:.3g} combinations, more than gemmtune enumerates ({:.0e}): "
        "use one of its named spaces ({}) or declare a narrower one",
        name_, spec_->name(), cartesian_size(), kMaxEnumeratedCombinations, named));
  }
  Configuration config;
  for (const auto& p : parameters_) config[p.name] = p.values.front();
  // A check's outcome depends only on the values of its inputs: each combination of them is
  // evaluated once (a GPU space visits millions of prefixes, its checks see a few hundred).
  std::vector<size_t> level(parameters_.size(), 0);
  std::vector<uint64_t> radix(parameters_.size(), 1);
  for (size_t p = parameters_.size(); p-- > 1;) {
    radix[p - 1] = radix[p] * parameters_[p].values.size();
  }
  std::vector<std::vector<std::unordered_map<uint64_t, bool>>> known(checks_at_.size());
  for (size_t i = 0; i < checks_at_.size(); ++i) known[i].resize(checks_at_[i].size());
  auto check = [&](size_t i, size_t k) {
    const Check& c = checks_at_[i][k];
    uint64_t key = 0;
    for (size_t p : c.inputs) key += level[p] * radix[p];
    auto it = known[i][k].find(key);
    if (it == known[i][k].end()) it = known[i][k].emplace(key, passes(c, config)).first;
    return it->second;
  };
  bool stop = false;
  std::function<void(size_t)> descend = [&](size_t i) {
    if (stop) return;
    if (i == parameters_.size()) {
      if (!visit(config)) stop = true;
      return;
    }
    const auto& values = parameters_[i].values;
    for (size_t j = 0; j < values.size(); ++j) {
      config[parameters_[i].name] = values[j];
      level[i] = j;
      bool ok = true;
      for (size_t k = 0; k < checks_at_[i].size() && ok; ++k) ok = check(i, k);
      if (ok) descend(i + 1);
      if (stop) return;
    }
  };
  if (parameters_.empty()) return;
  descend(0);
}

uint64_t ParamSpace::count() const {
  uint64_t n = 0;
  for_each([&](const Configuration&) {
    ++n;
    return true;
  });
  return n;
}

std::vector<Configuration> ParamSpace::enumerate() const {
  std::vector<Configuration> out;
  for_each([&](const Configuration& c) {
    out.push_back(c);
    return true;
  });
  return out;
}

double ParamSpace::cartesian_size() const {
  double n = 1;
  for (const auto& p : parameters_) n *= static_cast<double>(p.values.size());
  return n;
}

}  // namespace gemmtune
