// SPDX-License-Identifier: Apache-2.0
// Reading a kernel declaration (kernel_templates/<kernel>.json) into a KernelSpec, strictly: what
// the declaration says and what it may say (kernel_templates/README.md). Queries: kernel_spec.cpp.
#include "src/kernel/kernel_spec.hpp"

#include <algorithm>
#include <filesystem>
#include <initializer_list>
#include <set>

#include "src/core/error.hpp"
#include "src/core/json_util.hpp"

namespace gemmtune {

namespace {

using nlohmann::json;

// Strict reading of one object of a declaration: every key must be known and every value of its
// type, so that a misspelt field is an error instead of a silent default. Errors name the file
// and the field's path (e.g. "launch.split_k.reduce_entry").
class Fields {
 public:
  Fields(const json& j, std::string path, const std::string& origin,
         std::initializer_list<const char*> known)
      : j_(j), path_(std::move(path)), origin_(origin) {
    if (!j.is_object()) throw invalid_file(origin_, "field '" + path_ + "' must be an object");
    for (const auto& [key, value] : j.items()) {
      if (std::none_of(known.begin(), known.end(), [&](const char* k) { return key == k; })) {
        std::string names;
        for (const char* k : known) names += std::string(names.empty() ? "" : ", ") + k;
        throw error(key, "is not a known field (known: " + names + ")");
      }
    }
  }

  std::string where(const std::string& key) const {
    return path_.empty() ? key : path_ + "." + key;
  }
  Error error(const std::string& key, const std::string& what) const {
    return invalid_file(origin_, "field '" + where(key) + "' " + what);
  }
  bool has(const char* key) const { return j_.contains(key); }
  const json& at(const char* key) const { return j_.at(key); }

  std::string string(const char* key, bool required, const std::string& fallback = "") const {
    if (!has(key)) {
      if (required) throw error(key, "is missing");
      return fallback;
    }
    if (!at(key).is_string()) throw error(key, "must be a string");
    return at(key).get<std::string>();
  }
  bool boolean(const char* key) const {
    if (!has(key)) return false;
    if (!at(key).is_boolean()) throw error(key, "must be true or false");
    return at(key).get<bool>();
  }
  int64_t integer(const char* key) const {
    if (!has(key)) throw error(key, "is missing");
    if (!at(key).is_number_integer()) throw error(key, "must be an integer");
    return at(key).get<int64_t>();
  }
  // An array (empty when absent and not required).
  const json& array(const char* key, bool required) const {
    static const json empty = json::array();
    if (!has(key)) {
      if (required) throw error(key, "is missing");
      return empty;
    }
    if (!at(key).is_array()) throw error(key, "must be an array");
    return at(key);
  }
  // An expression string (or an integer, where `integers` allows it); empty when absent.
  Expression expression(const char* key, bool integers = false) const {
    if (!has(key)) return {};
    return parse_expression(at(key), where(key), integers);
  }
  Expression parse_expression(const json& v, const std::string& field, bool integers) const {
    std::string text;
    if (integers && v.is_number_integer()) {
      text = std::to_string(v.get<int64_t>());
    } else if (v.is_string()) {
      text = v.get<std::string>();
    } else {
      throw invalid_file(origin_, "field '" + field + "' must be an expression string");
    }
    try {
      return Expression::parse(text);
    } catch (const Error& e) {
      throw invalid_file(origin_, "field '" + field + "': " + e.what());
    }
  }
  // 1 to 3 expressions (launch sizes).
  std::vector<Expression> sizes(const char* key) const {
    const json& a = array(key, true);
    if (a.empty() || a.size() > 3) throw error(key, "must hold 1 to 3 expressions");
    std::vector<Expression> out;
    for (size_t i = 0; i < a.size(); ++i) {
      out.push_back(parse_expression(a[i], where(key) + "[" + std::to_string(i) + "]", true));
    }
    return out;
  }
  const std::string& origin() const { return origin_; }

 private:
  const json& j_;
  std::string path_;
  const std::string& origin_;
};

std::vector<int64_t> int_list(const json& j, const std::string& where, const std::string& origin) {
  if (!j.is_array() || j.empty()) {
    throw invalid_file(origin, "field '" + where + "' must be a non-empty array");
  }
  std::vector<int64_t> out;
  for (const auto& v : j) {
    if (!v.is_number_integer()) {
      throw invalid_file(origin, "field '" + where + "' must hold integers");
    }
    out.push_back(v.get<int64_t>());
  }
  return out;
}

// Every name in `expr` must be one of `names` (parameters, derived values and the context).
void check_names(const Expression& expr, const std::set<std::string>& names,
                 const std::string& field, const std::string& origin) {
  for (const auto& id : expr.identifiers()) {
    if (!names.count(id)) {
      throw invalid_file(origin, "field '" + field + "' uses unknown name '" + id + "'");
    }
  }
}

}  // namespace

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

namespace {

LaunchDeclaration parse_launch(const json& j, const std::set<std::string>& names,
                               const std::string& origin) {
  const Fields f(
      j, "launch", origin,
      {"local", "global", "pad", "align_ld", "align_ld_parameter", "half_ld", "split_k", "batch"});
  std::set<std::string> with_sizes = names;
  with_sizes.insert({"M", "N", "K", kComputeUnitsName});
  auto checked = [&](Expression e, const std::string& field) {
    check_names(e, with_sizes, field, origin);
    return e;
  };
  LaunchDeclaration d;
  d.local = f.sizes("local");
  d.global = f.sizes("global");
  if (d.local.size() != d.global.size()) {
    throw f.error("local", "and launch.global have different numbers of dimensions");
  }
  for (size_t i = 0; i < d.local.size(); ++i) {
    checked(d.local[i], "launch.local");
    checked(d.global[i], "launch.global");
  }
  if (f.has("pad")) {
    const Fields pad(f.at("pad"), "launch.pad", origin, {"M", "N", "K"});
    d.padded = true;
    d.pad_m = checked(pad.expression("M", true), "launch.pad.M");
    d.pad_n = checked(pad.expression("N", true), "launch.pad.N");
    d.pad_k = checked(pad.expression("K", true), "launch.pad.K");
  }
  if (f.has("align_ld")) d.align_ld = checked(f.expression("align_ld", true), "launch.align_ld");
  if (f.has("align_ld_parameter")) {
    d.align_ld_parameter = f.string("align_ld_parameter", true);
    if (!names.count(d.align_ld_parameter))
      throw f.error("align_ld_parameter", "names no parameter");
    if (!f.has("align_ld")) throw f.error("align_ld_parameter", "needs launch.align_ld");
  }
  if (f.has("half_ld")) {
    const Fields half(f.at("half_ld"), "launch.half_ld", origin, {"parameter", "width"});
    d.half_ld_parameter = half.string("parameter", true);
    if (!names.count(d.half_ld_parameter)) throw half.error("parameter", "names no parameter");
    d.half_ld_width = checked(half.expression("width", true), "launch.half_ld.width");
  }
  if (f.has("split_k")) {
    const Fields sk(f.at("split_k"), "launch.split_k", origin,
                    {"parameter", "reduce_entry", "workspace_elements", "reduce_global",
                     "reduce_local", "in_kernel", "counters"});
    SplitKDeclaration s;
    s.parameter = sk.string("parameter", true);
    if (!names.count(s.parameter)) throw sk.error("parameter", "names no parameter");
    s.reduce_entry = sk.string("reduce_entry", true);
    s.workspace_elements =
        checked(sk.expression("workspace_elements", true), "launch.split_k.workspace_elements");
    if (sk.has("reduce_global")) s.reduce_global = sk.sizes("reduce_global");
    if (sk.has("reduce_local")) s.reduce_local = sk.sizes("reduce_local");
    for (const auto& e : s.reduce_global) checked(e, "launch.split_k.reduce_global");
    for (const auto& e : s.reduce_local) checked(e, "launch.split_k.reduce_local");
    if (sk.has("in_kernel") != sk.has("counters")) {
      throw sk.error(sk.has("in_kernel") ? "counters" : "in_kernel",
                     "is missing: an in-kernel reduction needs both in_kernel and counters");
    }
    if (sk.has("in_kernel")) {
      s.in_kernel = checked(sk.expression("in_kernel", true), "launch.split_k.in_kernel");
      s.counters = checked(sk.expression("counters", true), "launch.split_k.counters");
    }
    d.split_k = std::move(s);
  }
  if (f.has("batch")) {
    const Fields batch(f.at("batch"), "launch.batch", origin, {"layouts"});
    for (const auto& l : batch.array("layouts", true)) {
      if (!l.is_string()) throw batch.error("layouts", "must hold layout names");
      try {
        d.batch_layouts.push_back(parse_batch_layout(l.get<std::string>()));
      } catch (const Error& e) {
        throw batch.error("layouts", e.what());
      }
    }
  }
  return d;
}

// "roles": role name -> an expression over the parameters and derived values (a bare name is
// one). split_k, when the launch block splits K too, must name the same parameter.
std::map<Role, Expression> parse_roles(const json& j, const std::set<std::string>& names,
                                       const LaunchDeclaration& launch, const std::string& origin) {
  if (!j.is_object()) throw invalid_file(origin, "field 'roles' must be an object");
  std::map<Role, Expression> roles;
  for (const auto& [key, value] : j.items()) {
    const std::string field = "roles." + key;
    const std::optional<Role> role = parse_role(key);
    if (!role) {
      std::string known;
      for (Role r : all_roles()) known += (known.empty() ? "" : ", ") + role_name(r);
      throw invalid_file(origin,
                         "field '" + field + "' is not a known role (known: " + known + ")");
    }
    if (!value.is_string()) {
      throw invalid_file(origin, "field '" + field + "' must be an expression string");
    }
    Expression expr;
    try {
      expr = Expression::parse(value.get<std::string>());
    } catch (const Error& e) {
      throw invalid_file(origin, "field '" + field + "': " + e.what());
    }
    check_names(expr, names, field, origin);
    if (*role == Role::kSplitK && launch.split_k && expr.text() != launch.split_k->parameter) {
      throw invalid_file(origin, "field '" + field + "' is '" + expr.text() +
                                     "', but launch.split_k.parameter is '" +
                                     launch.split_k->parameter + "'");
    }
    roles.emplace(*role, std::move(expr));
  }
  return roles;
}

SpaceDeclaration parse_space(const std::string& name, const json& j,
                             const std::set<std::string>& parameters, const std::string& origin) {
  const std::string path = "spaces." + name;
  const Fields f(j, path, origin, {"description", "base", "values"});
  SpaceDeclaration d;
  d.name = name;
  d.description = f.string("description", false);
  const std::string base = f.string("base", false, "default");
  if (base != "default" && base != "full") throw f.error("base", "must be \"default\" or \"full\"");
  d.base_full = base == "full";
  if (f.has("values")) {
    if (!f.at("values").is_object()) throw f.error("values", "must be an object");
    for (const auto& [pname, vals] : f.at("values").items()) {
      if (!parameters.count(pname)) {
        throw invalid_file(origin, "space " + name + " names unknown parameter " + pname);
      }
      d.values[pname] = int_list(vals, path + ".values." + pname, origin);
    }
  }
  return d;
}

}  // namespace

KernelSpec KernelSpec::from_json(const json& j, const std::string& origin) {
  const Fields f(
      j, "", origin,
      {"kernel", "source", "entry", "description", "backend", "clblast_kernel", "parameters",
       "derived", "constraints", "local_memory_bytes", "work_group_size", "registers", "launch",
       "spaces", "epilogue", "register_cap", "roles", "fallback"});
  KernelSpec s;
  s.raw_ = j;
  s.name_ = f.string("kernel", true);
  s.description_ = f.string("description", false);
  const std::string backend = f.string("backend", false, "opencl");
  if (backend == "clblast") {
    s.backend_ = Backend::kClblast;
    s.clblast_kernel_ = f.string("clblast_kernel", true);
  } else if (backend != "opencl") {
    throw f.error("backend", "must be \"opencl\" or \"clblast\"");
  } else if (f.has("clblast_kernel")) {
    throw f.error("clblast_kernel", "is only for the clblast backend");
  }
  // CLBlast compiles its own kernel: its declarations have no source of ours.
  const bool ours = s.backend_ == Backend::kOpenCl;
  s.source_file_ = f.string("source", ours);
  s.entry_point_ = f.string("entry", ours);
  if (ours && (s.source_file_.empty() || s.entry_point_.empty())) {
    throw f.error(s.source_file_.empty() ? "source" : "entry", "must not be empty");
  }
  std::set<std::string> names{"ELEM_BYTES"}, parameter_names;
  const json& params = f.array("parameters", true);
  for (size_t i = 0; i < params.size(); ++i) {
    const std::string where = "parameters[" + std::to_string(i) + "]";
    const Fields pf(params[i], where, origin,
                    {"name", "values", "default", "help", "runtime", "compiled_values"});
    Parameter p;
    p.name = pf.string("name", true);
    p.values = int_list(pf.has("values") ? pf.at("values") : json(), where + ".values", origin);
    p.default_value = pf.integer("default");
    if (!p.accepts(p.default_value)) {
      throw invalid_file(origin, where + ": default " + std::to_string(p.default_value) + " of " +
                                     p.name + " is not among its values");
    }
    p.help = pf.string("help", false);
    p.runtime = pf.boolean("runtime");
    if (pf.has("compiled_values")) {
      if (!p.runtime) throw pf.error("compiled_values", "needs \"runtime\": true");
      p.compiled_values = int_list(pf.at("compiled_values"), where + ".compiled_values", origin);
      for (int64_t v : p.compiled_values) {
        if (!p.accepts(v)) {
          throw invalid_file(origin, where + ".compiled_values: " + std::to_string(v) + " of " +
                                         p.name + " is not among its values");
        }
      }
    }
    if (!parameter_names.insert(p.name).second) {
      throw invalid_file(origin, "parameter " + p.name + " twice");
    }
    names.insert(p.name);
    s.parameters_.push_back(p);
  }
  const json& derived = f.array("derived", false);
  for (size_t i = 0; i < derived.size(); ++i) {
    const Fields df(derived[i], "derived[" + std::to_string(i) + "]", origin, {"name", "expr"});
    DerivedValue d;
    d.name = df.string("name", true);
    d.expr = df.expression("expr");
    if (d.expr.empty()) throw df.error("expr", "is missing");
    check_names(d.expr, names, df.where("expr"), origin);  // earlier derived values only
    names.insert(d.name);
    s.derived_.push_back(d);
  }
  const json& constraints = f.array("constraints", false);
  for (size_t i = 0; i < constraints.size(); ++i) {
    const Fields cf(constraints[i], "constraints[" + std::to_string(i) + "]", origin,
                    {"expr", "reason"});
    Constraint c;
    c.expr = cf.expression("expr");
    if (c.expr.empty()) throw cf.error("expr", "is missing");
    check_names(c.expr, names, cf.where("expr"), origin);
    c.reason = cf.string("reason", false);
    s.constraints_.push_back(c);
  }
  s.local_mem_expr_ = f.expression("local_memory_bytes");
  s.work_group_expr_ = f.expression("work_group_size");
  s.registers_expr_ = f.expression("registers");
  for (const char* field : {"local_memory_bytes", "work_group_size", "registers"}) {
    if (f.has(field)) check_names(f.expression(field), names, field, origin);
  }
  if (f.has("launch")) {
    s.launch_ = parse_launch(f.at("launch"), names, origin);
  } else if (ours) {
    throw f.error("launch", "is missing (an OpenCL template needs its launch geometry)");
  }
  if (f.has("roles")) s.roles_ = parse_roles(f.at("roles"), names, s.launch_, origin);
  // The launch block's split factor is the split_k role where "roles" does not name it.
  if (s.launch_.split_k && !s.roles_.count(Role::kSplitK)) {
    s.roles_.emplace(Role::kSplitK, Expression::parse(s.launch_.split_k->parameter));
  }
  for (const auto& item : f.array("epilogue", false)) {
    if (!item.is_string()) throw f.error("epilogue", "must hold strings");
    const std::string name = item.get<std::string>();
    if (name != "bias" && name != "relu" && name != "gelu") {
      throw f.error("epilogue", "names '" + name + "'; the items are bias, relu and gelu");
    }
    s.epilogue_.push_back(name);
  }
  if (f.has("register_cap")) {
    s.register_cap_parameter_ = f.string("register_cap", true);
    const Parameter* cap = s.find_parameter(s.register_cap_parameter_);
    if (!cap) {
      throw f.error("register_cap", "names unknown parameter " + s.register_cap_parameter_);
    }
    if (std::any_of(cap->values.begin(), cap->values.end(), [](int64_t v) { return v < 0; }) ||
        cap->default_value != 0) {
      throw invalid_file(
          origin, "register cap " + cap->name + " needs values >= 0 and the default 0 (no cap)");
    }
  }
  if (f.has("spaces")) {
    if (!f.at("spaces").is_object()) throw f.error("spaces", "must be an object");
    for (const auto& [space_name, sj] : f.at("spaces").items()) {
      s.spaces_[space_name] = parse_space(space_name, sj, parameter_names, origin);
    }
  }
  // Every declared default must be a valid configuration on an unlimited device.
  Context ctx{{"ELEM_BYTES", 4}};
  if (auto why = s.check(s.defaults(), DeviceLimits{}, ctx)) {
    throw invalid_file(origin, "the default configuration is invalid: " + *why);
  }
  if (f.has("fallback")) {
    if (!f.at("fallback").is_object()) throw f.error("fallback", "must be an object");
    Configuration partial;
    for (const auto& [name, value] : f.at("fallback").items()) {
      if (!value.is_number_integer()) throw f.error("fallback." + name, "must be an integer");
      partial[name] = value.get<int64_t>();
    }
    s.fallback_ = s.complete(partial);
    if (auto why = s.check(*s.fallback_, DeviceLimits{}, ctx)) {
      throw invalid_file(origin, "the fallback configuration is invalid: " + *why);
    }
  }
  // And every declared role must have a value there (a size a positive one).
  for (const auto& [role, expr] : s.roles_) {
    const auto v = s.evaluate(expr, s.defaults(), ctx);
    if (!v || (is_size_role(role) && *v <= 0)) {
      throw invalid_file(origin, "field 'roles." + role_name(role) + "' is " +
                                     (v ? std::to_string(*v) : std::string("undefined")) +
                                     " for the default configuration" +
                                     (is_size_role(role) ? " (a size must be positive)" : ""));
    }
  }
  return s;
}

}  // namespace gemmtune
