// SPDX-License-Identifier: Apache-2.0
// The declaration of a kernel template as data (kernel_templates/<name>.json): its tunable
// parameters with allowed values and defaults, derived values, constraints with the reason each
// exists, resource formulas (local memory, work-group size, registers) and named search spaces.
#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include <nlohmann/json.hpp>

#include "src/core/configuration.hpp"
#include "src/core/expression.hpp"
#include "src/core/problem.hpp"

namespace gemmtune {

struct Parameter {
  std::string name;
  std::vector<int64_t> values;  // every value the template accepts
  int64_t default_value = 0;
  std::string help;
  // Passed to the kernel as an int argument, not built in as a define: configurations that differ
  // only in runtime parameters share one build (kernel_templates/README.md, the contract).
  bool runtime = false;
  // Of a runtime parameter: values built in as a define all the same (the kernel's own path, free
  // of the argument), each its own build.
  std::vector<int64_t> compiled_values;

  // Whether `value` is one of `values`.
  bool accepts(int64_t value) const;
};

// A runtime parameter as builds see it: which of its values are a kernel argument.
struct RuntimeParameter {
  std::string name;
  std::vector<int64_t> compiled_values;  // built in as a define instead
  bool argued(int64_t value) const;
};
using RuntimeParameters = std::vector<RuntimeParameter>;

struct Constraint {
  Expression expr;  // must evaluate to non-zero
  std::string reason;
};

struct DerivedValue {
  std::string name;
  Expression expr;
};

// What a device allows; zero means "no limit known".
struct DeviceLimits {
  int64_t max_work_group_size = 0;
  int64_t local_mem_bytes = 0;
  int64_t max_registers_per_thread = 0;
  std::vector<int64_t> max_work_item_sizes;
  // How the device applies a kernel's register cap (registers per work-item), from the device
  // profile: a compiler option the value is appended to (`register_cap_option`, NVIDIA), or a
  // source attribute the template declares when built with -DREGCAP_ATTRIBUTE=1
  // (`register_cap_attribute`, AMD). With `register_cap_known` and neither, a kernel's
  // register-cap parameter must stay 0; without it (no device) nothing is refused on that ground.
  std::string register_cap_option;
  bool register_cap_attribute = false;
  bool register_cap_known = false;
  // Whether a template's split-K in the main kernel (launch.split_k.in_kernel) is refused: its
  // work-groups hand their parts over through fences of device scope, which some devices' OpenCL
  // gives only under a capability (in_kernel_reduction_refusal in device_capabilities.hpp).
  std::string in_kernel_reduction_refused;  // empty: allowed; else why not
};

// The define that asks a template to declare its register cap as a source attribute.
constexpr const char* kRegisterCapAttributeDefine = "-DREGCAP_ATTRIBUTE=1";

// Values that are not parameters but enter the formulas (e.g. ELEM_BYTES of the precision).
using Context = std::map<std::string, int64_t>;

// The name by which a launch block's expressions read the device's compute units (xgemm_fast's
// TAIL sizes its grid by them). A context without it leaves such an expression unevaluated:
// launch_geometry throws, try_launch_geometry has no value.
inline constexpr const char* kComputeUnitsName = "COMPUTE_UNITS";

struct SpaceDeclaration {
  std::string name;
  std::string description;
  std::map<std::string, std::vector<int64_t>> values;  // parameters not listed keep the default
  bool base_full = false;  // when true, unlisted parameters take all their declared values
};

// The `launch` block of a declaration (kernel_templates/README.md), parsed: expressions over the
// parameters, derived values, ELEM_BYTES and the kernel-view sizes M, N, K.
struct SplitKDeclaration {
  std::string parameter;          // the split factor; split-K runs when its value is above 1
  std::string reduce_entry;       // the reduce kernel, in the same program
  Expression workspace_elements;  // empty: no workspace
  std::vector<Expression> reduce_global, reduce_local;  // empty: the defaults
  // "in_kernel": non-zero when the main kernel adds the parts itself (no reduce launch), using
  // "counters" int counters per batch entry, which the host zeroes once (empty: never in-kernel).
  Expression in_kernel, counters;
};

struct LaunchDeclaration {
  std::vector<Expression> local, global;  // 1 to 3 each, as many of one as of the other
  // "pad": the kernel handles only multiples of these; the host pads (empty: not that dimension).
  bool padded = false;
  Expression pad_m, pad_n, pad_k;
  // "align_ld": A and B go to the kernel with leading dimensions and offsets that are multiples
  // of this (elements); the host copies an operand that is not so already (empty: never).
  Expression align_ld;
  // "align_ld_parameter": the parameter whose value 1 turns those copies on and 0 off, which the
  // chooser sets for a shape the configuration was not measured at (empty: none).
  std::string align_ld_parameter;
  // "half_ld": {"parameter": P, "width": expression}: P's value 1 loads an operand laid along K
  // whose leading dimension is a multiple of half of `width` (the wide loads' elements) but not
  // of `width` as half-wide vectors; the chooser sets it by the device profile's half_loads rule
  // (empty parameter: none).
  std::string half_ld_parameter;
  Expression half_ld_width;
  std::optional<SplitKDeclaration> split_k;
  std::vector<BatchLayout> batch_layouts;  // "batch": {"layouts": [...]}
};

// Who compiles and launches a kernel: gemmtune itself (an OpenCL C template beside the
// declaration) or CLBlast (its own kernel, configured through clblast::OverrideParameters).
enum class Backend { kOpenCl, kClblast };
std::string to_string(Backend backend);

// What a value of a configuration means to the code that reasons about its structure (the
// selection model, the static prior, the bottleneck report, the A/B protocol's "simpler"). Each
// template declares its roles (`"roles"` in its json: role name -> expression over its parameters
// and derived values), so that such code asks the declaration instead of reading parameter names.
// Sizes are in the kernel's column-major view.
enum class Role {
  kTileM,          // tile_m: work-group tile in M
  kTileN,          // tile_n: work-group tile in N
  kTileK,          // tile_k: K slice per iteration of the work-group
  kThreadsM,       // threads_m: work-items of a work-group along M
  kThreadsN,       // threads_n: work-items of a work-group along N
  kRegisterTileM,  // register_tile_m: outputs of a work-item along M
  kRegisterTileN,  // register_tile_n: outputs of a work-item along N
  kVectorM,        // vector_m: vector width along M
  kVectorN,        // vector_n: vector width along N
  kUnrollK,        // unroll_k: unroll of the inner K loop
  kSplitK,         // split_k: split-K factor (default: launch.split_k's parameter)
  kLocalBufferA,   // local_buffer_a: A staged in local memory (0/1)
  kLocalBufferB,   // local_buffer_b: B staged in local memory (0/1)
  kStages,         // stages: local-memory buffers per operand (pipeline depth)
  kPadA,           // pad_a: padding of A's local-memory rows
  kPadB,           // pad_b: padding of B's local-memory rows
  kSwizzle,        // swizzle: XOR swizzle of local memory
  kPrefetch,       // prefetch: register prefetch of the next K slice
  kStrideM,        // stride_m: strided (interleaved) accesses along M
  kStrideN,        // stride_n: strided (interleaved) accesses along N
  kGroupM,         // group_m: grouped rasterization of the work-groups
};
// Every role, in the order above.
const std::vector<Role>& all_roles();
// The role's name in a declaration ("tile_m").
const std::string& role_name(Role role);
// The role of a declared name; nullopt for a name that is no role.
std::optional<Role> parse_role(const std::string& name);
// Whether the role is a size (declared values must be positive), not a switch or an amount.
bool is_size_role(Role role);

class KernelSpec {
 public:
  // Reads and validates a declaration; errors name the file and the field.
  static KernelSpec load(const std::string& path);
  // The declaration `<dir>/<kernel>.json`. Throws Error(kInvalidArgument) naming the known
  // kernels for a name that is not a declaration of `dir`.
  static KernelSpec load_named(const std::string& dir, const std::string& kernel);
  static KernelSpec from_json(const nlohmann::json& j, const std::string& origin);

  const std::string& name() const { return name_; }
  const std::string& description() const { return description_; }
  const std::string& source_file() const { return source_file_; }
  const std::string& entry_point() const { return entry_point_; }
  Backend backend() const { return backend_; }
  // CLBlast's name of the kernel ("Xgemm", "XgemmDirect") for the clblast backend, else "".
  const std::string& clblast_kernel() const { return clblast_kernel_; }
  const std::vector<Parameter>& parameters() const { return parameters_; }
  const std::vector<DerivedValue>& derived() const { return derived_; }
  // The names `expr` reads that are not derived values (parameters, context values such as
  // ELEM_BYTES), those of the derived values it reads included.
  std::set<std::string> inputs(const Expression& expr) const;
  const std::vector<Constraint>& constraints() const { return constraints_; }
  const std::map<std::string, SpaceDeclaration>& spaces() const { return spaces_; }
  const LaunchDeclaration& launch() const { return launch_; }
  // The epilogue items the template implements ("bias", "relu", "gelu"); empty for none.
  const std::vector<std::string>& epilogue() const { return epilogue_; }
  // The resource formulas (empty when the declaration has none).
  const Expression& local_memory_expression() const { return local_mem_expr_; }
  const Expression& work_group_expression() const { return work_group_expr_; }
  const Expression& registers_expression() const { return registers_expr_; }
  const nlohmann::json& raw() const { return raw_; }
  const Parameter* find_parameter(const std::string& name) const;
  // The runtime parameters, in the order of the declaration: the order of their arguments after
  // the contract's.
  RuntimeParameters runtime_parameters() const;
  // `config` without the runtime parameters whose values are arguments: what a build of it
  // depends on (its defines).
  static Configuration built_in(const Configuration& config,
                                const RuntimeParameters& runtime_parameters);
  // The parameter whose value (registers per work-item, 0 = the compiler's choice) is handed to
  // the compiler the way the device applies register caps; empty when the kernel has none.
  const std::string& register_cap_parameter() const { return register_cap_parameter_; }
  // The build option that applies `config`'s register cap on a device with `limits`: the
  // device's option with the value appended, kRegisterCapAttributeDefine where the device takes
  // the cap as an attribute, or "" (no cap, or no way known).
  std::string register_cap_option(const Configuration& config, const DeviceLimits& limits) const;

  // The expression a role is declared as; null when the template does not declare it.
  const Expression* role_expression(Role role) const;
  bool declares(Role role) const { return role_expression(role) != nullptr; }
  // The role's value for `config` (missing parameters take their defaults); nullopt when the
  // template does not declare the role or its expression faults. `context` must hold what the
  // expressions may read besides the configuration (ELEM_BYTES).
  std::optional<int64_t> role(Role role, const Configuration& config, const Context& context) const;

  Configuration defaults() const;
  // The configuration that runs where the defaults do not fit: the fewest work-items and the
  // least local memory the template allows ("fallback" in the declaration; none if undeclared).
  const std::optional<Configuration>& fallback() const { return fallback_; }
  // Fills parameters missing from `partial` with defaults; unknown names are an error.
  Configuration complete(const Configuration& partial) const;

  // Why `config` is not valid (the first failed constraint or device limit), or nullopt. The
  // device limits include max_work_item_sizes against each declared local size that does not
  // depend on the problem's sizes.
  std::optional<std::string> check(const Configuration& config, const DeviceLimits& limits,
                                   const Context& context) const;

  // Value of a parameter, derived value or context entry for `config`; nullopt on a fault.
  std::optional<int64_t> value_of(const std::string& name, const Configuration& config,
                                  const Context& context) const;
  std::optional<int64_t> evaluate(const Expression& expr, const Configuration& config,
                                  const Context& context) const;

  std::optional<int64_t> local_mem_bytes(const Configuration& c, const Context& ctx) const;
  std::optional<int64_t> work_group_size(const Configuration& c, const Context& ctx) const;
  std::optional<int64_t> registers(const Configuration& c, const Context& ctx) const;

 private:
  std::string name_, description_, source_file_, entry_point_;
  Backend backend_ = Backend::kOpenCl;
  std::string clblast_kernel_;
  std::string register_cap_parameter_;
  std::vector<Parameter> parameters_;
  std::vector<DerivedValue> derived_;
  std::vector<Constraint> constraints_;
  Expression local_mem_expr_, work_group_expr_, registers_expr_;
  std::map<std::string, SpaceDeclaration> spaces_;
  std::optional<Configuration> fallback_;
  LaunchDeclaration launch_;
  std::vector<std::string> epilogue_;
  std::map<Role, Expression> roles_;
  nlohmann::json raw_;
};

// A role's value where the template's declaration is not at hand (a database entry of a kernel
// this build has no template for): the parameter of the name gemmtune's and CLBlast's templates
// give the role (tile_m: MWG, else WGD; ...), the first one `config` holds; nullopt for none.
// Code that has the declaration asks it instead.
std::optional<int64_t> conventional_role(Role role, const Configuration& config);

// The roles of one configuration: from its template's declaration, or without one (`spec` null)
// by conventional_role. `spec` and `config` must outlive it.
class RoleValues {
 public:
  RoleValues(const KernelSpec* spec, const Configuration& config, Context context)
      : spec_(spec), config_(config), context_(std::move(context)) {}
  std::optional<int64_t> get(Role role) const {
    return spec_ ? spec_->role(role, config_, context_) : conventional_role(role, config_);
  }
  // Whether the values come from a declaration (false: by the conventional names).
  bool declared() const { return spec_ != nullptr; }

 private:
  const KernelSpec* spec_;
  const Configuration& config_;
  Context context_;
};

// The most combinations (before constraints) a space may have to be enumerated: a minute or two
// of constraint checks (5.3 million take 2 s on one core); the largest named spaces of the
// templates hold a few million, xgemm's full space 1e8, xgemm_fast's 1.8e11.
constexpr double kMaxEnumeratedCombinations = 2e8;

// A kernel spec restricted to one named space and one device: the configurations a search visits.
class ParamSpace {
 public:
  ParamSpace(const KernelSpec& spec, const std::string& space_name, DeviceLimits limits,
             Context context);

  const KernelSpec& spec() const { return *spec_; }
  const std::string& name() const { return name_; }
  // The parameters with this space's values (single-valued ones included).
  const std::vector<Parameter>& parameters() const { return parameters_; }
  const DeviceLimits& limits() const { return limits_; }
  const Context& context() const { return context_; }

  // Number of valid configurations, without storing them.
  uint64_t count() const;
  // Every valid configuration in lexicographic order of the parameters' value lists.
  std::vector<Configuration> enumerate() const;
  // Calls `visit` for each valid configuration; stops early when it returns false. A space of
  // more than kMaxEnumeratedCombinations combinations is refused (invalid_argument naming the
  // template's spaces) instead of running for hours: count(), enumerate() and searches go
  // through here.
  void for_each(const std::function<bool(const Configuration&)>& visit) const;
  // Number of combinations before constraints.
  double cartesian_size() const;

  std::optional<std::string> check(const Configuration& config) const {
    return spec_->check(config, limits_, context_);
  }

 private:
  struct Check {
    enum class Kind {
      kConstraint,
      kLocalMem,
      kWorkGroup,
      kRegisters,
      kRegisterCap,
      kWorkItems,
      kInKernelReduction
    };
    Check(const Expression* e, std::string why, Kind k)
        : expr(e), reason(std::move(why)), kind(k) {}
    const Expression* expr;
    std::string reason;
    Kind kind;
    size_t dimension = 0;  // kWorkItems: the local size's dimension
    // The parameters it reads, directly or through derived values (indices into parameters_):
    // its outcome is a function of their values alone.
    std::vector<size_t> inputs;
  };
  bool passes(const Check& check, const Configuration& config) const;

  const KernelSpec* spec_;
  std::string name_;
  DeviceLimits limits_;
  Context context_;
  std::vector<Parameter> parameters_;
  std::vector<std::vector<Check>> checks_at_;  // checks whose inputs are all set at depth i
  std::vector<std::shared_ptr<Expression>> owned_;
};

}  // namespace gemmtune
