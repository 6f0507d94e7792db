#include "src/kernel/kernel_spec.hpp"

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <set>

#include <fmt/format.h>

#include "src/core/error.hpp"
#include "src/core/json_util.hpp"

namespace gemmtune {

namespace {

Expression parse_field(const nlohmann::json& j, const std::string& field,
                       const std::string& origin) {
  if (!j.contains(field)) return {};
  if (!j[field].is_string()) throw invalid_file(origin, "field '" + field + "' must be a string");
  try {
    return Expression::parse(j[field].get<std::string>());
  } catch (const Error& e) {
    throw invalid_file(origin, "field '" + field + "': " + e.what());
  }
}

std::vector<int64_t> int_list(const nlohmann::json& j, const std::string& where,
                              const std::string& origin) {
  if (!j.is_array() || j.empty()) throw invalid_file(origin, where + " must be a non-empty array");
  std::vector<int64_t> out;
  for (const auto& v : j) {
    if (!v.is_number_integer()) throw invalid_file(origin, where + " must hold integers");
    out.push_back(v.get<int64_t>());
  }
  return out;
}

// A register cap of `value` cannot be applied: the device is known to have no cap option.
bool cap_refused(int64_t value, const DeviceLimits& limits) {
  return value != 0 && limits.register_cap_known && limits.register_cap_option.empty();
}

// Why `config`'s register cap cannot be applied on a device with `limits`, or nullopt.
std::optional<std::string> register_cap_refusal(const KernelSpec& spec, const Configuration& config,
                                                const DeviceLimits& limits) {
  auto it = config.find(spec.register_cap_parameter());
  if (it == config.end() || !cap_refused(it->second, limits)) return std::nullopt;
  return it->first + "=" + std::to_string(it->second) +
         " caps registers, and the device profile names no register-cap build option";
}

}  // namespace

std::string to_string(Backend backend) {
  return backend == Backend::kClblast ? "clblast" : "opencl";
}

KernelSpec KernelSpec::load(const std::string& path) {
  return from_json(read_json_file(path), path);
}

KernelSpec KernelSpec::load_named(const std::string& dir, const std::string& kernel) {
  namespace fs = std::filesystem;
  if (kernel.empty() || kernel.find_first_of("/\\") != std::string::npos) {
    throw invalid_argument("kernel name '" + kernel + "' is not a template name");
  }
  const fs::path path = fs::path(dir) / (kernel + ".json");
  std::error_code ec;
  if (!fs::is_regular_file(path, ec)) {
    std::vector<std::string> known;
    for (const auto& e : fs::directory_iterator(dir, ec)) {
      if (e.path().extension() == ".json") known.push_back(e.path().stem().string());
    }
    std::sort(known.begin(), known.end());
    std::string names;
    for (const auto& k : known) names += (names.empty() ? "" : ", ") + k;
    throw invalid_argument("unknown kernel '" + kernel + "': no " + path.string() +
                           " (known: " + names + ")");
  }
  return load(path.string());
}

KernelSpec KernelSpec::from_json(const nlohmann::json& j, const std::string& origin) {
  KernelSpec s;
  s.raw_ = j;
  s.name_ = require_string(j, "kernel", origin);
  s.description_ = j.value("description", "");
  s.source_file_ = require_string(j, "source", origin);
  s.entry_point_ = require_string(j, "entry", origin);
  const std::string backend = j.value("backend", "opencl");
  if (backend == "clblast") {
    s.backend_ = Backend::kClblast;
    s.clblast_kernel_ = require_string(j, "clblast_kernel", origin);
  } else if (backend != "opencl") {
    throw invalid_file(origin, "field 'backend' must be \"opencl\" or \"clblast\"");
  }
  if (!j.contains("parameters") || !j["parameters"].is_array()) {
    throw invalid_file(origin, "field 'parameters' must be an array");
  }
  std::set<std::string> names;
  for (size_t i = 0; i < j["parameters"].size(); ++i) {
    const auto& pj = j["parameters"][i];
    const std::string where = "parameters[" + std::to_string(i) + "]";
    Parameter p;
    p.name = require_string(pj, "name", origin + " " + where);
    p.values = int_list(pj.value("values", nlohmann::json()), where + ".values", origin);
    if (!pj.contains("default") || !pj["default"].is_number_integer()) {
      throw invalid_file(origin, where + ".default must be an integer");
    }
    p.default_value = pj["default"].get<int64_t>();
    if (std::find(p.values.begin(), p.values.end(), p.default_value) == p.values.end()) {
      throw invalid_file(origin, where + ": default " + std::to_string(p.default_value) + " of " +
                                     p.name + " is not among its values");
    }
    p.help = pj.value("help", "");
    if (!names.insert(p.name).second) throw invalid_file(origin, "parameter " + p.name + " twice");
    s.parameters_.push_back(p);
  }
  for (const auto& dj : j.value("derived", nlohmann::json::array())) {
    DerivedValue d;
    d.name = require_string(dj, "name", origin + " derived");
    d.expr = parse_field(dj, "expr", origin + " derived " + d.name);
    s.derived_.push_back(d);
  }
  for (const auto& cj : j.value("constraints", nlohmann::json::array())) {
    Constraint c;
    c.expr = parse_field(cj, "expr", origin + " constraint");
    if (c.expr.empty()) throw invalid_file(origin, "a constraint has no 'expr'");
    c.reason = cj.value("reason", "");
    s.constraints_.push_back(c);
  }
  s.local_mem_expr_ = parse_field(j, "local_memory_bytes", origin);
  s.work_group_expr_ = parse_field(j, "work_group_size", origin);
  s.registers_expr_ = parse_field(j, "registers", origin);
  s.launch_ = j.value("launch", nlohmann::json::object());
  if (j.contains("register_cap")) {
    if (!j["register_cap"].is_string()) {
      throw invalid_file(origin, "field 'register_cap' must name a parameter");
    }
    s.register_cap_parameter_ = j["register_cap"].get<std::string>();
    const Parameter* cap = s.find_parameter(s.register_cap_parameter_);
    if (!cap) {
      throw invalid_file(
          origin, "field 'register_cap' names unknown parameter " + s.register_cap_parameter_);
    }
    if (std::any_of(cap->values.begin(), cap->values.end(), [](int64_t v) { return v < 0; }) ||
        cap->default_value != 0) {
      throw invalid_file(
          origin, "register cap " + cap->name + " needs values >= 0 and the default 0 (no cap)");
    }
  }
  // value() returns a temporary: keep it alive for the loops over items().
  const nlohmann::json spaces = j.value("spaces", nlohmann::json::object());
  for (const auto& [space_name, sj] : spaces.items()) {
    SpaceDeclaration d;
    d.name = space_name;
    d.description = sj.value("description", "");
    d.base_full = sj.value("base", "default") == "full";
    const nlohmann::json space_values = sj.value("values", nlohmann::json::object());
    for (const auto& [pname, vals] : space_values.items()) {
      if (!names.count(pname)) {
        throw invalid_file(origin, "space " + space_name + " names unknown parameter " + pname);
      }
      d.values[pname] = int_list(vals, "spaces." + space_name + "." + pname, origin);
    }
    s.spaces_[space_name] = d;
  }
  // Every declared default must be a valid configuration on an unlimited device.
  Context ctx{{"ELEM_BYTES", 4}};
  if (auto why = s.check(s.defaults(), DeviceLimits{}, ctx)) {
    throw invalid_file(origin, "the default configuration is invalid: " + *why);
  }
  return s;
}

const Parameter* KernelSpec::find_parameter(const std::string& name) const {
  for (const auto& p : parameters_) {
    if (p.name == name) return &p;
  }
  return nullptr;
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
    if (std::find(p.values.begin(), p.values.end(), it->second) == p.values.end()) {
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
  if (limits.max_registers_per_thread > 0) {
    auto regs = registers(config, context);
    if (regs && *regs > limits.max_registers_per_thread) {
      return "estimated " + std::to_string(*regs) +
             " registers per work-item exceed the profile's " +
             std::to_string(limits.max_registers_per_thread);
    }
  }
  if (auto why = register_cap_refusal(*this, config, limits)) return why;
  return std::nullopt;
}

std::string KernelSpec::register_cap_option(const Configuration& config,
                                            const DeviceLimits& limits) const {
  if (register_cap_parameter_.empty() || limits.register_cap_option.empty()) return "";
  auto it = config.find(register_cap_parameter_);
  if (it == config.end() || it->second <= 0) return "";
  return limits.register_cap_option + std::to_string(it->second);
}

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
  std::function<size_t(const Expression&)> last_input = [&](const Expression& e) -> size_t {
    size_t d = 0;
    for (const auto& id : e.identifiers()) {
      if (auto it = depth.find(id); it != depth.end()) {
        d = std::max(d, it->second);
        continue;
      }
      for (const auto& dv : spec.derived()) {
        if (dv.name == id) d = std::max(d, last_input(dv.expr));
      }
    }
    return d;
  };
  checks_at_.resize(std::max<size_t>(parameters_.size(), 1));
  for (const auto& c : spec.constraints()) {
    checks_at_[last_input(c.expr)].push_back({&c.expr, c.reason, Check::Kind::kConstraint});
  }
  auto add_limit = [&](const char* field, Check::Kind kind) {
    // The resource formulas are re-parsed here only to learn their inputs.
    if (!spec.raw().contains(field)) return;
    auto e = std::make_shared<Expression>(Expression::parse(spec.raw()[field].get<std::string>()));
    owned_.push_back(e);
    checks_at_[last_input(*e)].push_back({e.get(), field, kind});
  };
  add_limit("local_memory_bytes", Check::Kind::kLocalMem);
  add_limit("work_group_size", Check::Kind::kWorkGroup);
  add_limit("registers", Check::Kind::kRegisters);
  if (!spec.register_cap_parameter().empty()) {
    auto e = std::make_shared<Expression>(Expression::parse(spec.register_cap_parameter()));
    owned_.push_back(e);
    checks_at_[last_input(*e)].push_back({e.get(), "register_cap", Check::Kind::kRegisterCap});
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
  bool stop = false;
  std::function<void(size_t)> descend = [&](size_t i) {
    if (stop) return;
    if (i == parameters_.size()) {
      if (!visit(config)) stop = true;
      return;
    }
    for (int64_t v : parameters_[i].values) {
      config[parameters_[i].name] = v;
      bool ok = true;
      for (const auto& c : checks_at_[i]) {
        if (!passes(c, config)) {
          ok = false;
          break;
        }
      }
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
