// SPDX-License-Identifier: Apache-2.0
// The library column: each row through libgemmtune's public calls (gemmtune::Gemm, GemmEpilogue,
// GemmStridedBatched, GemmBatched) on the suite's queue and buffers, as an application makes them:
// the argument checks, the choice among the databases, the per-queue call cache and the
// compiled-in templates all count. Its user database is the suite's, handed over in memory.
#include <fmt/format.h>

#include "gemmtune/gemmtune.hpp"
#include "src/api/choice.hpp"
#include "src/bench/suite_internal.hpp"
#include "src/core/error.hpp"

namespace gemmtune::suite {

namespace {

template <typename T>
T scalar(double v) {
  return static_cast<T>(v);
}
template <>
half scalar<half>(double v) {
  return FloatToHalf(static_cast<float>(v));
}

// The problem in the public interface's terms (Explain's and the calls' arguments).
GemmProblem public_problem(const Problem& p) {
  const Epilogue& e = p.epilogue;
  const auto activation = e.activation == Activation::kRelu   ? EpilogueActivation::kRelu
                          : e.activation == Activation::kGelu ? EpilogueActivation::kGelu
                                                              : EpilogueActivation::kNone;
  const auto precision = p.precision == Precision::kFP64        ? GemmPrecision::kDouble
                         : p.precision == Precision::kFP16Acc32 ? GemmPrecision::kHalf
                                                                : GemmPrecision::kSingle;
  return GemmProblem{p.order == Order::kRowMajor ? Layout::kRowMajor : Layout::kColMajor,
                     p.trans_a ? Transpose::kYes : Transpose::kNo,
                     p.trans_b ? Transpose::kYes : Transpose::kNo,
                     static_cast<size_t>(p.shape.m),
                     static_cast<size_t>(p.shape.n),
                     static_cast<size_t>(p.shape.k),
                     precision,
                     static_cast<size_t>(p.batch),
                     p.batch > 1 && p.batch_layout == BatchLayout::kOffsets,
                     e.bias,
                     activation};
}

class LibraryCall : public SideCall {
 public:
  LibraryCall(ClEnv& env, const CaseData& d, bool epilogue)
      : env_(env), p_(d.problem_for(epilogue)), q_(public_problem(p_)), g_(d.buffers(epilogue)) {
    const Shape& s = p_.shape;
    const bool row = p_.order == Order::kRowMajor;
    // Dense leading dimensions of the operands as stored (the suite's buffers are dense).
    auto ld = [&](int64_t rows, int64_t cols) { return static_cast<size_t>(row ? cols : rows); };
    a_ld_ = p_.trans_a ? ld(s.k, s.m) : ld(s.m, s.k);
    b_ld_ = p_.trans_b ? ld(s.n, s.k) : ld(s.k, s.n);
    c_ld_ = ld(s.m, s.n);
    auto absolute = [](int64_t base, const std::vector<int64_t>& rel) {
      std::vector<size_t> out;
      for (int64_t r : rel) out.push_back(static_cast<size_t>(base + r));
      return out;
    };
    a_offsets_ = absolute(g_.a_offset, g_.a_offsets);
    b_offsets_ = absolute(g_.b_offset, g_.b_offsets);
    c_offsets_ = absolute(g_.c_offset, g_.c_offsets);
    epilogue_.bias = q_.bias ? g_.bias : nullptr;
    epilogue_.activation = q_.activation;
  }

  void enqueue(cl::Event* last) override {
    StatusCode s = StatusCode::kInternalError;
    cl_event event = nullptr;
    cl_event* want = last ? &event : nullptr;
    switch (p_.precision) {
      case Precision::kFP32:
        s = call<float>(want);
        break;
      case Precision::kFP64:
        s = call<double>(want);
        break;
      case Precision::kFP16Acc32:
        s = call<half>(want);
        break;
      default:
        throw NotAvailable(
            "the library's half GEMM stores half and computes in float (16acc32); it has no "
            "half-arithmetic GEMM");
    }
    if (s != StatusCode::kSuccess) {
      throw Error(ErrorCode::kDevice,
                  fmt::format("gemmtune::Gemm: {}: {}", StatusName(s), LastErrorMessage()));
    }
    if (last) *last = cl::Event(event);  // takes the caller's reference the library handed over
  }

  // What the call runs, as gemmtune::Explain says; none when it cannot say (the call's own
  // failure says why).
  std::optional<LibraryChoice> explain() const {
    Explanation why;
    if (Explain(q_, env_.queue()(), &why) != StatusCode::kSuccess) return std::nullopt;
    return LibraryChoice{why.kernel, why.parameters, why.source, why.origin,
                         why.entry,  why.exact,      why.notes};
  }

 private:
  template <typename T>
  StatusCode call(cl_event* event) {
    cl_command_queue queue = env_.queue()();
    const T alpha = scalar<T>(p_.alpha), beta = scalar<T>(p_.beta);
    const auto a_off = static_cast<size_t>(g_.a_offset), b_off = static_cast<size_t>(g_.b_offset),
               c_off = static_cast<size_t>(g_.c_offset);
    if (p_.batch == 1 && !q_.bias && q_.activation == EpilogueActivation::kNone) {
      return Gemm<T>(q_.layout, q_.a_transpose, q_.b_transpose, q_.m, q_.n, q_.k, alpha, g_.a,
                     a_off, a_ld_, g_.b, b_off, b_ld_, beta, g_.c, c_off, c_ld_, &queue, event);
    }
    if (p_.batch == 1) {
      return GemmEpilogue<T>(q_.layout, q_.a_transpose, q_.b_transpose, q_.m, q_.n, q_.k, alpha,
                             g_.a, a_off, a_ld_, g_.b, b_off, b_ld_, beta, g_.c, c_off, c_ld_,
                             epilogue_, &queue, event);
    }
    const size_t batch = q_.batch_count;
    if (q_.offsets_batch) {
      return GemmBatched<T>(q_.layout, q_.a_transpose, q_.b_transpose, q_.m, q_.n, q_.k, alpha,
                            g_.a, a_offsets_.data(), a_ld_, g_.b, b_offsets_.data(), b_ld_, beta,
                            g_.c, c_offsets_.data(), c_ld_, batch, &queue, event);
    }
    return GemmStridedBatched<T>(q_.layout, q_.a_transpose, q_.b_transpose, q_.m, q_.n, q_.k, alpha,
                                 g_.a, a_off, a_ld_, static_cast<size_t>(g_.a_stride), g_.b, b_off,
                                 b_ld_, static_cast<size_t>(g_.b_stride), beta, g_.c, c_off, c_ld_,
                                 static_cast<size_t>(g_.c_stride), batch, &queue, event);
  }

  ClEnv& env_;
  Problem p_;
  GemmProblem q_;
  GemmBuffers g_;
  size_t a_ld_ = 0, b_ld_ = 0, c_ld_ = 0;
  std::vector<size_t> a_offsets_, b_offsets_, c_offsets_;
  EpilogueOptions epilogue_;
};

}  // namespace

std::unique_ptr<SideCall> library_call(ClEnv& env, CaseData& d, bool epilogue) {
  return std::make_unique<LibraryCall>(env, d, epilogue);
}

std::optional<LibraryChoice> library_choice(ClEnv& env, CaseData& d, bool epilogue) {
  return LibraryCall(env, d, epilogue).explain();
}

LibrarySession::LibrarySession(const std::vector<NamedDatabase>& databases)
    : databases_(databases) {
  if (databases.empty()) return;
  std::vector<Database> dbs;
  std::vector<std::string> names;
  for (const auto& d : databases) {
    dbs.push_back(d.db);
    names.push_back(d.name);
  }
  // An application sets one database: several are merged as `gemmtune db merge` would.
  database = names.front();
  for (size_t i = 1; i < names.size(); ++i) database += " + " + names[i];
  try {
    api::set_user_database(merge_databases(dbs, names), database);
  } catch (const Error& e) {
    unavailable = std::string("the library takes one user database, and ") + e.what();
    database.clear();
  }
}

api::Choices LibrarySession::choose(const DeviceInfo& device, const DeviceLimits& limits,
                                    const Problem& problem) const {
  const auto library = api::database_snapshot();
  if (unavailable.empty()) return api::choose(*library, device, limits, problem);
  // The library could not take them as one database: the same layers, with the suite's
  // databases in place of a user database.
  api::DatabaseSnapshot snapshot;
  snapshot.notes = library->notes;
  for (const auto& d : databases_) snapshot.owned.push_back({d.name, d.db});
  api::Layer user{"user database", {}};
  for (const auto& named : snapshot.owned) user.databases.push_back(&named);
  snapshot.layers.push_back(std::move(user));
  for (const api::Layer& layer : library->layers) {
    if (layer.source != "user database") snapshot.layers.push_back(layer);
  }
  return api::choose(snapshot, device, limits, problem);
}

std::vector<std::string> LibrarySession::stale_entries() const {
  std::vector<std::string> out;
  const api::Assets& assets = api::Assets::get();
  for (const auto& d : databases_) {
    size_t stale = 0;
    std::string first;
    for (const auto& e : d.db.entries()) {
      const KernelSpec* spec = assets.spec(e.key.kernel);
      const std::string why = spec ? stale_reason(*spec, e.parameters, e.key.precision)
                                   : "kernel " + e.key.kernel + " is not in this library";
      if (why.empty()) continue;
      if (stale++ == 0) first = e.key.kernel + " " + e.key.shape.to_string() + ": " + why;
    }
    if (stale > 0) {
      out.push_back(fmt::format("{}: {} of {} entries (the first, {})", d.name, stale,
                                d.db.entries().size(), first));
    }
  }
  return out;
}

LibrarySession::~LibrarySession() {
  try {
    SetDatabase("");
    ClearCache();
  } catch (...) {
    // Nothing to report at the end of a run.
  }
}

}  // namespace gemmtune::suite
