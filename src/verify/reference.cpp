// SPDX-License-Identifier: Apache-2.0
#include "src/verify/reference.hpp"

#include <cmath>
#include <cstdint>
#include <cstring>
#include <limits>
#include <set>
#include <sstream>
#include <type_traits>

#include <fmt/format.h>

#include "src/core/error.hpp"

namespace gemmtune {

double unit_roundoff(Precision precision) {
  switch (precision) {
    case Precision::kFP64:
      return std::ldexp(1.0, -53);
    case Precision::kFP16:
    case Precision::kFP16Acc32:
      return std::ldexp(1.0, -11);
    default:
      return std::ldexp(1.0, -24);
  }
}

double accumulation_roundoff(Precision precision) {
  return precision == Precision::kFP16Acc32 ? unit_roundoff(Precision::kFP32)
                                            : unit_roundoff(precision);
}

double relative_tolerance(Precision precision, int64_t k) {
  const double u_acc = accumulation_roundoff(precision);
  const double u_store = unit_roundoff(precision);
  const double accumulation =
      kToleranceFactor * u_acc * std::sqrt(static_cast<double>(std::max<int64_t>(k, 1)));
  return accumulation + (u_store > u_acc ? kStorageRoundingFactor * u_store : 0.0);
}

double activate(double x, Activation activation) {
  switch (activation) {
    case Activation::kRelu:
      return std::max(x, 0.0);
    case Activation::kGelu:
      return 0.5 * x * (1.0 + std::tanh(0.7978845608028654 * (x + 0.044715 * x * x * x)));
    default:
      return x;
  }
}

uint16_t float_to_half(float value) {
  uint32_t x;
  std::memcpy(&x, &value, sizeof x);
  const uint16_t sign = static_cast<uint16_t>((x >> 16) & 0x8000u);
  const uint32_t abs = x & 0x7fffffffu;
  if (abs >= 0x7f800000u) {  // infinity or NaN
    return static_cast<uint16_t>(sign | 0x7c00u | (abs > 0x7f800000u ? 0x200u : 0u));
  }
  if (abs >= 0x477ff000u) return static_cast<uint16_t>(sign | 0x7c00u);  // rounds past 65504
  if (abs < 0x38800000u) {               // below the smallest normal half: a subnormal or zero
    if (abs < 0x33000000u) return sign;  // under half of the smallest subnormal
    const uint32_t exp = abs >> 23;
    const uint32_t mant = (abs & 0x7fffffu) | 0x800000u;
    const uint32_t shift = 126 - exp;  // bits dropped to count in units of 2^-24
    uint32_t h = mant >> shift;
    const uint32_t rest = mant & ((1u << shift) - 1);
    const uint32_t halfway = 1u << (shift - 1);
    if (rest > halfway || (rest == halfway && (h & 1u))) ++h;
    return static_cast<uint16_t>(sign | h);
  }
  uint32_t h = ((abs >> 13) - (112u << 10));  // rebias the exponent from 127 to 15
  const uint32_t rest = abs & 0x1fffu;
  if (rest > 0x1000u || (rest == 0x1000u && (h & 1u))) ++h;  // may carry into the exponent
  return static_cast<uint16_t>(sign | h);
}

float half_to_float(uint16_t bits) {
  const uint32_t sign = static_cast<uint32_t>(bits & 0x8000u) << 16;
  const uint32_t exp = (bits >> 10) & 0x1fu;
  const uint32_t mant = bits & 0x3ffu;
  float out;
  if (exp == 0) {
    out = std::ldexp(static_cast<float>(mant), -24);
    if (sign) out = -out;
    return out;
  }
  uint32_t x;
  if (exp == 31) {
    x = sign | 0x7f800000u | (mant << 13);
  } else {
    x = sign | ((exp + 112u) << 23) | (mant << 13);
  }
  std::memcpy(&out, &x, sizeof out);
  return out;
}

double round_to_precision(double value, Precision precision) {
  switch (precision) {
    case Precision::kFP64:
      return value;
    case Precision::kFP16:
    case Precision::kFP16Acc32:
      return half_to_float(float_to_half(static_cast<float>(value)));
    default:
      return static_cast<double>(static_cast<float>(value));
  }
}

std::vector<unsigned char> pack_elements(const std::vector<double>& values, Precision precision) {
  const size_t bytes = static_cast<size_t>(element_bytes(precision));
  std::vector<unsigned char> out(values.size() * bytes);
  for (size_t i = 0; i < values.size(); ++i) {
    unsigned char* dst = out.data() + i * bytes;
    if (bytes == 8) {
      std::memcpy(dst, &values[i], 8);
    } else if (bytes == 4) {
      const float f = static_cast<float>(values[i]);
      std::memcpy(dst, &f, 4);
    } else {
      const uint16_t h = float_to_half(static_cast<float>(values[i]));
      std::memcpy(dst, &h, 2);
    }
  }
  return out;
}

namespace {

// One stored element of `width` bytes (8: double, 4: float, 2: half) as a double; read with
// memcpy, since a buffer promises no alignment.
double unpack_element(const unsigned char* src, size_t width) {
  if (width == 8) {
    double d;
    std::memcpy(&d, src, 8);
    return d;
  }
  if (width == 4) {
    float f;
    std::memcpy(&f, src, 4);
    return f;
  }
  uint16_t h;
  std::memcpy(&h, src, 2);
  return half_to_float(h);
}

}  // namespace

namespace {

// splitmix64: a tiny generator whose sequence is the same on every platform and library (the
// standard distributions are not), one independent stream per matrix.
class Stream {
 public:
  Stream(uint64_t seed, uint64_t stream) : state_(seed ^ (0x632be59bd9b4e019ull * (stream + 1))) {}
  uint64_t next() {
    uint64_t z = (state_ += 0x9e3779b97f4a7c15ull);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
    return z ^ (z >> 31);
  }
  // Uniform in [0.5, 1.5): no value is near zero, so no output cancels.
  double value() { return 0.5 + static_cast<double>(next() >> 11) * 0x1.0p-53; }

 private:
  uint64_t state_;
};

std::vector<double> random_matrix(int64_t count, uint64_t seed, uint64_t stream,
                                  Precision precision) {
  Stream s(seed, stream);
  std::vector<double> out(static_cast<size_t>(count));
  for (auto& v : out) v = round_to_precision(s.value(), precision);
  return out;
}

// Rows `pick` of op(X) (rows x cols) as an Eigen matrix, from X stored in `order` (transposed
// when `trans`).
Eigen::MatrixXd operand(const std::vector<double>& stored, Order order, int64_t rows, int64_t cols,
                        bool trans, const std::vector<int64_t>& pick) {
  Eigen::MatrixXd out(static_cast<Eigen::Index>(pick.size()), cols);
  const int64_t stored_rows = trans ? cols : rows;
  const int64_t stored_cols = trans ? rows : cols;
  for (int64_t j = 0; j < cols; ++j) {
    for (size_t r = 0; r < pick.size(); ++r) {
      const int64_t i = pick[r];
      const int64_t idx = trans ? stored_index(order, stored_rows, stored_cols, j, i)
                                : stored_index(order, stored_rows, stored_cols, i, j);
      out(static_cast<Eigen::Index>(r), j) = stored[static_cast<size_t>(idx)];
    }
  }
  return out;
}

std::vector<int64_t> all_rows(int64_t m) {
  std::vector<int64_t> rows(static_cast<size_t>(m));
  for (int64_t i = 0; i < m; ++i) rows[static_cast<size_t>(i)] = i;
  return rows;
}

// The rows checked of a problem with M rows: all of them up to kFullCheckLimit, else the two
// first and two last rows and one row of every band of kSampleBand rows, at an offset within
// the band that a fixed hash of the band picks (the same rows in every run).
std::vector<int64_t> checked_rows(const Problem& problem, const ReferenceOptions& options) {
  const auto& s = problem.shape;
  const int64_t band_rows = std::max<int64_t>(options.sample_band, 1);
  if (s.m * s.n * s.k * problem.batch <= options.full_check_limit || s.m <= 4 * band_rows) {
    return all_rows(s.m);
  }
  std::set<int64_t> rows{0, 1, s.m - 2, s.m - 1};
  for (int64_t band = 0; band * band_rows < s.m; ++band) {
    const uint64_t hash = (static_cast<uint64_t>(band) + 1) * 0x9E3779B97F4A7C15ull;
    const int64_t first = band * band_rows;
    const int64_t size = std::min(band_rows, s.m - first);
    rows.insert(first + static_cast<int64_t>((hash >> 32) % static_cast<uint64_t>(size)));
  }
  return {rows.begin(), rows.end()};
}

}  // namespace

HostMatrices make_inputs(const Problem& problem, uint64_t seed) {
  const auto& s = problem.shape;
  HostMatrices h;
  if (problem.batch < 1) throw invalid_argument("batch must be at least 1");
  h.a = random_matrix(s.m * s.k * problem.batch, seed, 0, problem.precision);
  h.b = random_matrix(s.k * s.n * problem.batch, seed, 1, problem.precision);
  h.c = random_matrix(s.m * s.n * problem.batch, seed, 2, problem.precision);
  if (problem.epilogue.bias) {
    // Products are near alpha·K and C0 near 1: a bias of -(0.5 to 1.5) times their sum puts
    // about half of the outputs below zero.
    double centre = problem.alpha * static_cast<double>(s.k) + problem.beta;
    if (centre == 0.0) centre = 1.0;
    h.bias = random_matrix(s.n, seed, 3, Precision::kFP64);
    for (auto& v : h.bias) v = round_to_precision(-centre * v, problem.precision);
  }
  return h;
}

Reference::Reference(const Problem& problem, const HostMatrices& inputs,
                     const ReferenceOptions& options)
    : problem_(problem), rows_(checked_rows(problem, options)) {
  const auto& s = problem.shape;
  const auto batch = static_cast<size_t>(problem.batch);
  if (inputs.a.size() != batch * static_cast<size_t>(s.m * s.k) ||
      inputs.b.size() != batch * static_cast<size_t>(s.k * s.n) ||
      inputs.c.size() != batch * static_cast<size_t>(s.m * s.n)) {
    throw invalid_argument("the reference's inputs do not match the problem's shape and batch");
  }
  const Epilogue& epilogue = problem.epilogue;
  if (epilogue.bias && inputs.bias.size() != static_cast<size_t>(s.n)) {
    throw invalid_argument("the reference's bias does not have N elements");
  }
  tolerance_ = relative_tolerance(problem.precision, s.k) +
               (epilogue.activation == Activation::kGelu
                    ? kActivationFactor * accumulation_roundoff(problem.precision)
                    : 0.0);
  expected_.resize(batch);
  scale_.resize(batch);
  auto slice = [](const std::vector<double>& all, size_t entry, int64_t size) {
    const auto first = all.begin() + static_cast<std::ptrdiff_t>(entry * static_cast<size_t>(size));
    return std::vector<double>(first, first + size);
  };
  const std::vector<int64_t> b_rows = all_rows(s.k);
  for (size_t e = 0; e < batch; ++e) {
    const Eigen::MatrixXd a =
        operand(slice(inputs.a, e, s.m * s.k), problem.order, s.m, s.k, problem.trans_a, rows_);
    const Eigen::MatrixXd b =
        operand(slice(inputs.b, e, s.k * s.n), problem.order, s.k, s.n, problem.trans_b, b_rows);
    expected_[e].noalias() = problem.alpha * (a * b);
    scale_[e].noalias() = std::abs(problem.alpha) * (a.cwiseAbs() * b.cwiseAbs());
    // beta == 0 ignores C entirely (it may hold NaN on the device).
    if (problem.beta != 0.0) {
      const Eigen::MatrixXd c0 =
          operand(slice(inputs.c, e, s.m * s.n), problem.order, s.m, s.n, false, rows_);
      expected_[e] += problem.beta * c0;
      scale_[e] += std::abs(problem.beta) * c0.cwiseAbs();
    }
    if (epilogue.bias) {
      for (int64_t j = 0; j < s.n; ++j) {
        expected_[e].col(j).array() += inputs.bias[static_cast<size_t>(j)];
        scale_[e].col(j).array() += std::abs(inputs.bias[static_cast<size_t>(j)]);
      }
    }
    if (epilogue.activation != Activation::kNone) {
      expected_[e] =
          expected_[e].unaryExpr([&](double x) { return activate(x, epilogue.activation); });
      if (epilogue.activation == Activation::kGelu) scale_[e] *= kGeluSlopeBound;
    }
  }
}

std::string Reference::coverage() const {
  const Shape& s = problem_.shape;
  if (!sampled()) {
    return fmt::format("all {} outputs", s.m * s.n * problem_.batch) +
           (problem_.batch > 1 ? fmt::format(" ({} GEMMs)", problem_.batch) : "");
  }
  return fmt::format("{} of {} rows (all {} columns)", rows_.size(), s.m, s.n) +
         (problem_.batch > 1 ? fmt::format(" of each of {} GEMMs", problem_.batch) : "");
}

namespace {

// NaN and infinite elements among n stored values of type T (half: its bits).
template <typename T>
int64_t count_non_finite(const T* v, int64_t n) {
  int64_t count = 0;
  for (int64_t i = 0; i < n; ++i) {
    if constexpr (std::is_same_v<T, uint16_t>) {
      count += (v[i] & 0x7c00) == 0x7c00;  // exponent all ones: infinite or NaN
    } else {
      count += !std::isfinite(v[i]);
    }
  }
  return count;
}

}  // namespace

Verification Reference::check(const std::vector<double>& c) const {
  const int64_t per = problem_.shape.m * problem_.shape.n;
  return check_with(
      [&](int64_t e, int64_t index) { return c[static_cast<size_t>(e * per + index)]; },
      [&](int64_t e) { return count_non_finite(c.data() + e * per, per); },
      static_cast<int64_t>(c.size()));
}

Verification Reference::check(const std::vector<unsigned char>& bytes, Precision precision,
                              const std::vector<int64_t>& starts) const {
  const int64_t per = problem_.shape.m * problem_.shape.n;
  const auto eb = static_cast<int64_t>(element_bytes(precision));
  Verification v;
  v.tolerance = tolerance_;
  if (static_cast<int64_t>(starts.size()) != problem_.batch) {
    v.message = fmt::format("result has {} matrices, expected {}", starts.size(), problem_.batch);
    return v;
  }
  for (int64_t first : starts) {
    if (first < 0 || (first + per) * eb > static_cast<int64_t>(bytes.size())) {
      v.message = fmt::format("result holds {} bytes, too few for its matrices", bytes.size());
      return v;
    }
  }
  auto element = [&](int64_t e, int64_t index) {
    return bytes.data() + (starts[static_cast<size_t>(e)] + index) * eb;
  };
  auto at = [&](int64_t e, int64_t index) {
    return unpack_element(element(e, index), static_cast<size_t>(eb));
  };
  auto non_finite = [&](int64_t e) -> int64_t {
    const unsigned char* p = element(e, 0);
    const auto aligned = [&](size_t a) { return reinterpret_cast<uintptr_t>(p) % a == 0; };
    if (eb == 8 && aligned(alignof(double))) {
      return count_non_finite(reinterpret_cast<const double*>(p), per);
    }
    if (eb == 4 && aligned(alignof(float))) {
      return count_non_finite(reinterpret_cast<const float*>(p), per);
    }
    if (eb == 2 && aligned(alignof(uint16_t))) {
      return count_non_finite(reinterpret_cast<const uint16_t*>(p), per);
    }
    int64_t count = 0;
    for (int64_t i = 0; i < per; ++i) count += !std::isfinite(at(e, i));
    return count;
  };
  return check_with(at, non_finite, per * problem_.batch);
}

template <typename At, typename NonFinite>
Verification Reference::check_with(At at_index, NonFinite non_finite, int64_t size) const {
  const auto& s = problem_.shape;
  const int64_t per = s.m * s.n;
  const int64_t total = per * problem_.batch;
  Verification v;
  v.tolerance = tolerance_;
  if (size != total) {
    v.message = fmt::format("result has {} elements, expected {}", size, total);
    return v;
  }
  auto at = [&](int64_t e, int64_t i, int64_t j) {
    return at_index(e, stored_index(problem_.order, s.m, s.n, i, j));
  };
  // Every output is checked for NaN and infinity, in storage order; only when some are found is
  // the first one (column by column) looked for, to name it.
  int64_t nans = 0, nan_e = -1, nan_i = -1, nan_j = -1;
  for (int64_t e = 0; e < problem_.batch; ++e) nans += non_finite(e);
  for (int64_t e = 0; e < problem_.batch && nans > 0 && nan_e < 0; ++e) {
    for (int64_t j = 0; j < s.n && nan_e < 0; ++j) {
      for (int64_t i = 0; i < s.m; ++i) {
        if (!std::isfinite(at(e, i, j))) {
          nan_e = e;
          nan_i = i;
          nan_j = j;
          break;
        }
      }
    }
  }
  // The values of the checked rows against the reference, and where the worst one is.
  int64_t worst_e = 0, worst_r = 0, worst_j = 0;
  const auto checked_rows = static_cast<int64_t>(rows_.size());
  v.checked = checked_rows * s.n * problem_.batch;
  const bool row_major = problem_.order == Order::kRowMajor;
  for (int64_t e = 0; e < problem_.batch && nans == 0; ++e) {
    const Eigen::MatrixXd& expected = expected_[static_cast<size_t>(e)];
    const Eigen::MatrixXd& scales = scale_[static_cast<size_t>(e)];
    auto compare = [&](int64_t r, int64_t j) {
      const double err = std::abs(at(e, rows_[static_cast<size_t>(r)], j) - expected(r, j));
      const double scale = scales(r, j);
      const double rel =
          scale > 0 ? err / scale : (err == 0 ? 0.0 : std::numeric_limits<double>::infinity());
      if (rel > v.tolerance) ++v.wrong;
      if (rel > v.max_error) {
        v.max_error = rel;
        worst_e = e;
        worst_r = r;
        worst_j = j;
      }
    };
    // Along the stored rows or columns of C, whichever is contiguous.
    if (row_major) {
      for (int64_t r = 0; r < checked_rows; ++r) {
        for (int64_t j = 0; j < s.n; ++j) compare(r, j);
      }
    } else {
      for (int64_t j = 0; j < s.n; ++j) {
        for (int64_t r = 0; r < checked_rows; ++r) compare(r, j);
      }
    }
  }
  // Batch entries are named only in batched problems, so single-GEMM messages stay as they were.
  auto where = [&](int64_t e, int64_t i, int64_t j) {
    return problem_.batch > 1 ? fmt::format("C[{}]({},{})", e, i, j)
                              : fmt::format("C({},{})", i, j);
  };
  if (nans > 0) {
    v.wrong += nans;
    v.max_error = std::numeric_limits<double>::infinity();
    v.message = fmt::format("{} of {} outputs are NaN or infinite, the first at {}", nans, total,
                            where(nan_e, nan_i, nan_j));
    return v;
  }
  v.ok = v.wrong == 0;
  if (!v.ok) {
    const int64_t worst_i = rows_[static_cast<size_t>(worst_r)];
    v.message = fmt::format(
        "{} of {} {}outputs wrong: max error {:.3g} (relative to |alpha||A||B|+|beta||C|{}) "
        "exceeds tolerance {:.3g}; {} = {:.9g}, expected {:.9g}",
        v.wrong, v.checked, sampled() ? "checked " : "", v.max_error,
        problem_.epilogue.bias ? "+|bias|" : "", v.tolerance, where(worst_e, worst_i, worst_j),
        at(worst_e, worst_i, worst_j), expected_[static_cast<size_t>(worst_e)](worst_r, worst_j));
  }
  return v;
}

}  // namespace gemmtune
