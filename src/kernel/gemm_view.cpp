#include "src/kernel/gemm_view.hpp"

#include "src/core/error.hpp"

namespace gemmtune {

KernelView kernel_view(const Problem& problem) {
  KernelView v;
  v.k = problem.shape.k;
  if (problem.order == Order::kColMajor) {
    v.m = problem.shape.m;
    v.n = problem.shape.n;
    v.trans_a = problem.trans_a;
    v.trans_b = problem.trans_b;
    v.swap_ab = false;
  } else {
    v.m = problem.shape.n;
    v.n = problem.shape.m;
    v.trans_a = problem.trans_b;
    v.trans_b = problem.trans_a;
    v.swap_ab = true;
  }
  v.batch = problem.batch;
  v.batch_layout = problem.batch_layout;
  return v;
}

bool supports_epilogue(const KernelSpec& spec, const Epilogue& epilogue) {
  if (epilogue.none()) return true;
  const nlohmann::json& raw = spec.raw();
  if (!raw.contains("epilogue") || !raw["epilogue"].is_array()) return false;
  auto declares = [&](const std::string& item) {
    for (const auto& v : raw["epilogue"]) {
      if (v.is_string() && v.get<std::string>() == item) return true;
    }
    return false;
  };
  if (epilogue.bias && !declares("bias")) return false;
  return epilogue.activation == Activation::kNone || declares(to_string(epilogue.activation));
}

bool supports_batch(const KernelSpec& spec, BatchLayout layout) {
  const nlohmann::json& launch = spec.launch();
  if (!launch.contains("batch") || !launch["batch"].is_object()) return false;
  const auto& layouts = launch["batch"].value("layouts", nlohmann::json::array());
  if (!layouts.is_array()) return false;
  for (const auto& l : layouts) {
    if (l.is_string() && l.get<std::string>() == to_string(layout)) return true;
  }
  return false;
}

namespace {

int64_t round_up(int64_t x, int64_t multiple) {
  return (x + multiple - 1) / multiple * multiple;
}

class LaunchEvaluator {
 public:
  LaunchEvaluator(const KernelSpec& spec, const Configuration& config, Context context)
      : spec_(spec), config_(config), context_(std::move(context)) {}

  Context& context() { return context_; }

  int64_t value(const nlohmann::json& j, const std::string& field) const {
    std::string text;
    if (j.is_number_integer()) {
      text = std::to_string(j.get<int64_t>());
    } else if (j.is_string()) {
      text = j.get<std::string>();
    } else {
      throw error(field, "must be an expression string");
    }
    Expression expr;
    try {
      expr = Expression::parse(text);
    } catch (const Error& e) {
      throw error(field, e.what());
    }
    auto v = spec_.evaluate(expr, config_, context_);
    if (!v) throw error(field, "'" + text + "' cannot be evaluated (division by zero?)");
    if (*v <= 0) throw error(field, "'" + text + "' = " + std::to_string(*v) + " is not positive");
    return *v;
  }

  std::vector<size_t> sizes(const nlohmann::json& j, const std::string& field) const {
    if (!j.is_array() || j.empty() || j.size() > 3) {
      throw error(field, "must be an array of 1 to 3 expressions");
    }
    std::vector<size_t> out;
    for (size_t i = 0; i < j.size(); ++i) {
      out.push_back(static_cast<size_t>(value(j[i], field + "[" + std::to_string(i) + "]")));
    }
    return out;
  }

  Error error(const std::string& field, const std::string& what) const {
    return Error(ErrorCode::kInvalidFile,
                 "kernel " + spec_.name() + ": launch." + field + " " + what);
  }

 private:
  const KernelSpec& spec_;
  const Configuration& config_;
  Context context_;
};

}  // namespace

LaunchGeometry launch_geometry(const KernelSpec& spec, const Configuration& config,
                               const Context& context, const KernelView& view) {
  const nlohmann::json& launch = spec.launch();
  LaunchEvaluator eval(spec, config, context);
  LaunchGeometry g;
  g.m = view.m;
  g.n = view.n;
  g.k = view.k;
  if (launch.contains("pad")) {
    const auto& pad = launch["pad"];
    if (!pad.is_object()) throw eval.error("pad", "must be an object {\"M\": expr, ...}");
    for (const auto& [dim, expr] : pad.items()) {
      if (dim != "M" && dim != "N" && dim != "K") {
        throw eval.error("pad", "names '" + dim + "'; only M, N and K can be padded");
      }
    }
    g.padded = true;
    if (pad.contains("M")) g.pad_m = eval.value(pad["M"], "pad.M");
    if (pad.contains("N")) g.pad_n = eval.value(pad["N"], "pad.N");
    if (pad.contains("K")) g.pad_k = eval.value(pad["K"], "pad.K");
    g.m = round_up(view.m, g.pad_m);
    g.n = round_up(view.n, g.pad_n);
    g.k = round_up(view.k, g.pad_k);
  }
  auto& ctx = eval.context();
  ctx["M"] = g.m;
  ctx["N"] = g.n;
  ctx["K"] = g.k;
  if (!launch.contains("local") || !launch.contains("global")) {
    throw eval.error("", "needs both 'local' and 'global'");
  }
  g.local = eval.sizes(launch["local"], "local");
  g.global = eval.sizes(launch["global"], "global");
  if (g.local.size() != g.global.size()) {
    throw eval.error("local", "and launch.global have different numbers of dimensions");
  }
  for (size_t d = 0; d < g.local.size(); ++d) {
    if (g.global[d] % g.local[d] != 0) {
      throw eval.error("global", "[" + std::to_string(d) + "] = " + std::to_string(g.global[d]) +
                                     " is not a multiple of the local size " +
                                     std::to_string(g.local[d]));
    }
  }
  if (view.batch > 1) {
    if (!supports_batch(spec, view.batch_layout)) {
      throw Error(ErrorCode::kUnsupported, "kernel " + spec.name() + " does not declare the " +
                                               to_string(view.batch_layout) + " batch layout");
    }
    if (g.global.size() == 2) {
      g.global.push_back(1);
      g.local.push_back(1);
    }
    if (g.local[2] != 1) {
      throw eval.error("local",
                       "[2] must be 1 in a batched template (dimension 2 holds the batch)");
    }
    g.global[2] *= static_cast<size_t>(view.batch);
  }
  if (launch.contains("split_k")) {
    const auto& sk = launch["split_k"];
    if (!sk.is_object() || !sk.contains("parameter") || !sk["parameter"].is_string() ||
        !sk.contains("reduce_entry") || !sk["reduce_entry"].is_string()) {
      throw eval.error("split_k", "must hold 'parameter' and 'reduce_entry' strings");
    }
    SplitK s;
    s.parameter = sk["parameter"].get<std::string>();
    s.reduce_entry = sk["reduce_entry"].get<std::string>();
    auto it = config.find(s.parameter);
    if (it == config.end()) throw eval.error("split_k.parameter", "names no parameter");
    s.factor = it->second;
    if (sk.contains("workspace_elements")) {
      s.workspace_elements = eval.value(sk["workspace_elements"], "split_k.workspace_elements");
    }
    // The reduce kernel guards its edges; by default one work-item per element of C.
    s.reduce_local = sk.contains("reduce_local")
                         ? eval.sizes(sk["reduce_local"], "split_k.reduce_local")
                         : std::vector<size_t>{16, 16};
    s.reduce_global = sk.contains("reduce_global")
                          ? eval.sizes(sk["reduce_global"], "split_k.reduce_global")
                          : std::vector<size_t>{static_cast<size_t>(round_up(g.m, 16)),
                                                static_cast<size_t>(round_up(g.n, 16))};
    if (view.batch > 1) {
      // The reduction of a batch is one launch too, the entry in dimension 2.
      if (s.reduce_global.size() != 2 || s.reduce_local.size() != 2) {
        throw eval.error("split_k", "of a batched template needs two-dimensional reduce sizes");
      }
      s.reduce_global.push_back(static_cast<size_t>(view.batch));
      s.reduce_local.push_back(1);
    }
    g.split_k = s;
  }
  return g;
}

}  // namespace gemmtune
