// SPDX-License-Identifier: Apache-2.0
#include "src/kernel/kernel_spec.hpp"

#include <algorithm>
#include <set>

#include "src/core/error.hpp"
#include "src/kernel/spec_limits.hpp"

namespace gemmtune {

bool Parameter::accepts(int64_t value) const {
  return std::find(values.begin(), values.end(), value) != values.end();
}

namespace {

// Why `config`'s register cap cannot be applied on a device with `limits`, or nullopt.
std::optional<std::string> register_cap_refusal(const KernelSpec& spec, const Configuration& config,
                                                const DeviceLimits& limits) {
  auto it = config.find(spec.register_cap_parameter());
  if (it == config.end() || !cap_refused(it->second, limits)) return std::nullopt;
  return it->first + "=" + std::to_string(it->second) +
         " caps registers, and the device profile declares no register-cap method (register_cap)";
}

std::string work_items_reason(size_t dimension, int64_t size, int64_t limit) {
  return "local size " + std::to_string(size) + " in dimension " + std::to_string(dimension) +
         " exceeds the device's max work-item size " + std::to_string(limit);
}

}  // namespace

std::string to_string(Backend backend) {
  return backend == Backend::kClblast ? "clblast" : "opencl";
}

bool RuntimeParameter::argued(int64_t value) const {
  return std::find(compiled_values.begin(), compiled_values.end(), value) == compiled_values.end();
}

RuntimeParameters KernelSpec::runtime_parameters() const {
  RuntimeParameters out;
  for (const auto& p : parameters_) {
    if (p.runtime) out.push_back({p.name, p.compiled_values});
  }
  return out;
}

Configuration KernelSpec::built_in(const Configuration& config,
                                   const RuntimeParameters& runtime_parameters) {
  Configuration out = config;
  for (const auto& p : runtime_parameters) {
    const auto it = out.find(p.name);
    if (it != out.end() && p.argued(it->second)) out.erase(it);
  }
  return out;
}

const Parameter* KernelSpec::find_parameter(const std::string& name) const {
  for (const auto& p : parameters_) {
    if (p.name == name) return &p;
  }
  return nullptr;
}

const Expression* KernelSpec::role_expression(Role role) const {
  if (auto it = roles_.find(role); it != roles_.end()) return &it->second;
  return nullptr;
}

std::optional<int64_t> KernelSpec::role(Role role, const Configuration& config,
                                        const Context& context) const {
  if (const Expression* expr = role_expression(role)) return evaluate(*expr, config, context);
  return std::nullopt;
}

Configuration KernelSpec::defaults() const {
  Configuration c;
  for (const auto& p : parameters_) c[p.name] = p.default_value;
  return c;
}

Configuration KernelSpec::complete(const Configuration& partial) const {
  for (const auto& [name, value] : partial) {
    if (!find_parameter(name)) {
      throw invalid_argument("kernel " + name_ + " has no parameter " + name);
    }
  }
  return merge_configuration(defaults(), partial, false);
}

std::set<std::string> KernelSpec::inputs(const Expression& expr) const {
  std::set<std::string> out;
  for (const auto& id : expr.identifiers()) {
    const auto d = std::find_if(derived_.begin(), derived_.end(),
                                [&](const DerivedValue& v) { return v.name == id; });
    if (d == derived_.end()) {
      out.insert(id);
    } else {
      const std::set<std::string> more = inputs(d->expr);
      out.insert(more.begin(), more.end());
    }
  }
  return out;
}

std::optional<int64_t> KernelSpec::value_of(const std::string& name, const Configuration& config,
                                            const Context& context) const {
  if (auto it = config.find(name); it != config.end()) return it->second;
  if (auto it = context.find(name); it != context.end()) return it->second;
  // A configuration recorded before a parameter existed ran with that parameter's default.
  if (const Parameter* p = find_parameter(name)) return p->default_value;
  for (const auto& d : derived_) {
    if (d.name == name) return evaluate(d.expr, config, context);
  }
  throw invalid_argument("kernel " + name_ + ": unknown name '" + name + "' in an expression");
}

std::optional<int64_t> KernelSpec::evaluate(const Expression& expr, const Configuration& config,
                                            const Context& context) const {
  bool fault = false;
  auto result = expr.try_evaluate([&](const std::string& n) -> std::optional<int64_t> {
    auto v = value_of(n, config, context);
    if (!v) {
      fault = true;
      return int64_t{1};  // keep evaluating; the fault is reported below
    }
    return v;
  });
  if (fault) return std::nullopt;
  return result;
}

std::optional<int64_t> KernelSpec::local_mem_bytes(const Configuration& c,
                                                   const Context& ctx) const {
  if (local_mem_expr_.empty()) return int64_t{0};
  return evaluate(local_mem_expr_, c, ctx);
}
std::optional<int64_t> KernelSpec::work_group_size(const Configuration& c,
                                                   const Context& ctx) const {
  if (work_group_expr_.empty()) return int64_t{1};
  return evaluate(work_group_expr_, c, ctx);
}
std::optional<int64_t> KernelSpec::registers(const Configuration& c, const Context& ctx) const {
  if (registers_expr_.empty()) return std::nullopt;
  return evaluate(registers_expr_, c, ctx);
}

std::optional<std::string> KernelSpec::check(const Configuration& config,
                                             const DeviceLimits& limits,
                                             const Context& context) const {
  for (const auto& p : parameters_) {
    auto it = config.find(p.name);
    if (it == config.end()) return "parameter " + p.name + " has no value";
    if (!p.accepts(it->second)) {
      return p.name + "=" + std::to_string(it->second) + " is not an allowed value";
    }
  }
  for (const auto& c : constraints_) {
    auto v = evaluate(c.expr, config, context);
    if (!v || *v == 0) {
      return "constraint " + c.expr.text() + " fails" +
             (c.reason.empty() ? "" : " (" + c.reason + ")");
    }
  }
  if (limits.local_mem_bytes > 0) {
    auto lds = local_mem_bytes(config, context);
    if (!lds || *lds > limits.local_mem_bytes) {
      return "local memory " + (lds ? std::to_string(*lds) : std::string("?")) +
             " bytes exceeds the device's " + std::to_string(limits.local_mem_bytes);
    }
  }
  if (limits.max_work_group_size > 0) {
    auto wg = work_group_size(config, context);
    if (!wg || *wg > limits.max_work_group_size) {
      return "work-group size " + (wg ? std::to_string(*wg) : std::string("?")) +
             " exceeds the device's " + std::to_string(limits.max_work_group_size);
    }
  }
  const auto& items = limits.max_work_item_sizes;
  for (size_t d = 0; d < launch_.local.size() && d < items.size(); ++d) {
    if (items[d] <= 0 || reads_sizes(launch_.local[d])) continue;
    auto v = evaluate(launch_.local[d], config, context);
    if (v && *v > items[d]) return work_items_reason(d, *v, items[d]);
  }
  if (limits.max_registers_per_thread > 0) {
    auto regs = registers(config, context);
    if (regs && *regs > limits.max_registers_per_thread) {
      return "estimated " + std::to_string(*regs) +
             " registers per work-item exceed the profile's " +
             std::to_string(limits.max_registers_per_thread);
    }
  }
  if (auto why = register_cap_refusal(*this, config, limits)) return why;
  if (!limits.in_kernel_reduction_refused.empty() && launch_.split_k &&
      !launch_.split_k->in_kernel.empty()) {
    const auto split = config.find(launch_.split_k->parameter);
    const auto in_kernel = evaluate(launch_.split_k->in_kernel, config, context);
    if (split != config.end() && split->second > 1 && in_kernel && *in_kernel != 0) {
      return "split-K in one launch (" + launch_.split_k->in_kernel.text() + ") " +
             limits.in_kernel_reduction_refused;
    }
  }
  return std::nullopt;
}

std::string KernelSpec::register_cap_option(const Configuration& config,
                                            const DeviceLimits& limits) const {
  if (register_cap_parameter_.empty()) return "";
  auto it = config.find(register_cap_parameter_);
  if (it == config.end() || it->second <= 0) return "";
  // The option names the cap itself; with the attribute the value is already among the defines.
  if (!limits.register_cap_option.empty()) {
    return limits.register_cap_option + std::to_string(it->second);
  }
  return limits.register_cap_attribute ? kRegisterCapAttributeDefine : "";
}

}  // namespace gemmtune
