// SPDX-License-Identifier: Apache-2.0
#include "src/kernel/gemm_view.hpp"

#include <algorithm>

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
  const auto& items = spec.epilogue();
  auto declares = [&](const std::string& item) {
    return std::find(items.begin(), items.end(), item) != items.end();
  };
  if (epilogue.bias && !declares("bias")) return false;
  return epilogue.activation == Activation::kNone || declares(to_string(epilogue.activation));
}

bool supports_batch(const KernelSpec& spec, BatchLayout layout) {
  const auto& layouts = spec.launch().batch_layouts;
  return std::find(layouts.begin(), layouts.end(), layout) != layouts.end();
}

namespace {

int64_t round_up(int64_t x, int64_t multiple) {
  return (x + multiple - 1) / multiple * multiple;
}

// Evaluates the declaration's expressions for one configuration; a value that cannot be
// computed or is not positive is an Error naming the template and the field.
class LaunchEvaluator {
 public:
  LaunchEvaluator(const KernelSpec& spec, const Configuration& config, Context context)
      : spec_(spec), config_(config), context_(std::move(context)) {}

  Context& context() { return context_; }

  int64_t value(const Expression& expr, const std::string& field) const {
    auto v = spec_.evaluate(expr, config_, context_);
    if (!v) throw error(field, "'" + expr.text() + "' cannot be evaluated (division by zero?)");
    if (*v <= 0) {
      throw error(field, "'" + expr.text() + "' = " + std::to_string(*v) + " is not positive");
    }
    return *v;
  }

  // A switch: any value that can be computed, 0 meaning off.
  bool flag(const Expression& expr, const std::string& field) const {
    auto v = spec_.evaluate(expr, config_, context_);
    if (!v) throw error(field, "'" + expr.text() + "' cannot be evaluated (division by zero?)");
    return *v != 0;
  }

  std::vector<size_t> sizes(const std::vector<Expression>& exprs, const std::string& field) const {
    std::vector<size_t> out;
    for (size_t i = 0; i < exprs.size(); ++i) {
      out.push_back(static_cast<size_t>(value(exprs[i], field + "[" + std::to_string(i) + "]")));
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

Context launch_context(Precision precision, int64_t compute_units) {
  return {{"ELEM_BYTES", element_bytes(precision)}, {kComputeUnitsName, compute_units}};
}

LaunchGeometry launch_geometry(const KernelSpec& spec, const Configuration& config,
                               const Context& context, const KernelView& view) {
  const LaunchDeclaration& launch = spec.launch();
  LaunchEvaluator eval(spec, config, context);
  LaunchGeometry g;
  g.m = view.m;
  g.n = view.n;
  g.k = view.k;
  if (launch.padded) {
    g.padded = true;
    if (!launch.pad_m.empty()) g.pad_m = eval.value(launch.pad_m, "pad.M");
    if (!launch.pad_n.empty()) g.pad_n = eval.value(launch.pad_n, "pad.N");
    if (!launch.pad_k.empty()) g.pad_k = eval.value(launch.pad_k, "pad.K");
    g.m = round_up(view.m, g.pad_m);
    g.n = round_up(view.n, g.pad_n);
    g.k = round_up(view.k, g.pad_k);
  }
  if (!launch.align_ld.empty()) g.align_ld = eval.value(launch.align_ld, "align_ld");
  auto& ctx = eval.context();
  ctx["M"] = g.m;
  ctx["N"] = g.n;
  ctx["K"] = g.k;
  if (launch.local.empty()) throw eval.error("", "is not declared: the template has no launch");
  g.local = eval.sizes(launch.local, "local");
  g.global = eval.sizes(launch.global, "global");
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
  if (launch.split_k) {
    const SplitKDeclaration& sk = *launch.split_k;
    SplitK s;
    s.parameter = sk.parameter;
    s.reduce_entry = sk.reduce_entry;
    auto it = config.find(s.parameter);
    if (it == config.end()) throw eval.error("split_k.parameter", "names no parameter");
    s.factor = it->second;
    if (!sk.workspace_elements.empty()) {
      s.workspace_elements = eval.value(sk.workspace_elements, "split_k.workspace_elements");
    }
    // The reduce kernel guards its edges; by default one work-item per element of C.
    s.reduce_local = !sk.reduce_local.empty() ? eval.sizes(sk.reduce_local, "split_k.reduce_local")
                                              : std::vector<size_t>{16, 16};
    s.reduce_global = !sk.reduce_global.empty()
                          ? eval.sizes(sk.reduce_global, "split_k.reduce_global")
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
    if (s.factor > 1 && !sk.in_kernel.empty() && eval.flag(sk.in_kernel, "split_k.in_kernel")) {
      s.in_kernel = true;
      s.counters = eval.value(sk.counters, "split_k.counters");
    }
    g.split_k = s;
  }
  return g;
}

std::optional<LaunchGeometry> try_launch_geometry(const KernelSpec& spec,
                                                  const Configuration& config,
                                                  const Context& context, const KernelView& view) {
  try {
    return launch_geometry(spec, config, context, view);
  } catch (const Error&) {
    return std::nullopt;
  }
}

}  // namespace gemmtune
