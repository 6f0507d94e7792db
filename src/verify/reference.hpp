// SPDX-License-Identifier: Apache-2.0
// Test data and the Eigen reference that every measured configuration is checked against.
//
// Inputs are drawn from a fixed-seed generator, uniform in [0.5, 1.5) and rounded to the
// problem's precision, so that the device and the reference multiply exactly the same numbers
// and no output cancels to zero. The reference is computed in double precision.
//
// Tolerance rule: an output C(i,j) is correct when |C(i,j) - Cref(i,j)| <= tol * S(i,j), with
//   S(i,j) = |alpha| * sum_k |op(A)(i,k)| |op(B)(k,j)| + |beta| * |C0(i,j)|
// bounding the magnitude of everything that was rounded, and
//   tol = kToleranceFactor * u_acc * sqrt(K) + kStorageRoundingFactor * u_store,
// where u_acc is the unit roundoff of the arithmetic (accumulation) and u_store that of the
// stored C. sqrt(K) is the growth of independent rounding errors over K accumulations (the
// worst-case bound grows with K but is far too loose to catch a wrong kernel). The second term
// is the one rounding of the result into a narrower storage type: it matters only for 16acc32
// (half C from float sums), whose accumulation error is float-sized but whose output carries
// half's 2^-11; for 16, 32 and 64 the arithmetic is the storage type and the first term already
// covers it (u_store counts only when it is wider than u_acc). NaN or infinity is always wrong.
//
// Epilogue (Problem::epilogue): Cref = act(alpha·op(A)·op(B) + beta·C0 + bias[j]) in double, and
// the rule's S(i,j) gains |bias[j]|, since the bias is one more rounded addend. An activation is
// applied to a value already off by at most tol * S: ReLU does not enlarge that error, GELU by at
// most its largest slope (kGeluSlopeBound), which multiplies S; GELU's own evaluation on the
// device (tanh, within a few ulp of its arithmetic) adds kActivationFactor * u_acc to tol.
//
// Batched problems (batch > 1) hold `batch` independent GEMMs of one shape; each is checked by
// the same rule. Half has a small range: outputs beyond 65504 are infinite and therefore wrong,
// so half problems must keep K * |alpha| * 2.25 + |beta| * 1.5 below that.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include <Eigen/Dense>

#include "src/core/problem.hpp"

namespace gemmtune {

constexpr double kToleranceFactor = 8.0;

// Problems with M·N·K·batch above this are checked on a sample of rows: computing the whole
// reference in double on the host would take minutes at 8192³, longer than a search's first
// evaluations. The sample holds the two first and two last rows and one row of every band of
// kSampleBand rows (all N columns each), so every work-group tile of at least kSampleBand rows
// has a checked row across its whole width; NaN and infinity are looked for in every output.
constexpr int64_t kFullCheckLimit = int64_t{1} << 31;
constexpr int64_t kSampleBand = 32;
// Margin on the one rounding of a float result into half storage (16acc32): the exact bound is
// 1 * u_store; 2 leaves room for a device that rounds alpha * sum + beta * c in another order.
constexpr double kStorageRoundingFactor = 2.0;

// max |d/dx GELU(x)| is 1.1289 (at x ≈ 1.5); rounded up.
constexpr double kGeluSlopeBound = 1.13;
// Room for the device's tanh (OpenCL allows several ulp) and the few operations around it.
constexpr double kActivationFactor = 16.0;

// The activations of the epilogue, in double (GELU in the tanh form the kernels use).
double activate(double x, Activation activation);

// Half the distance from 1 to the next number of the precision's storage (2^-24 for FP32,
// 2^-11 for 16 and 16acc32).
double unit_roundoff(Precision precision);
// The same for the precision's arithmetic: 2^-24 for 16acc32, else as unit_roundoff.
double accumulation_roundoff(Precision precision);
// The allowed error relative to S(i,j) for a reduction over `k` terms (the rule above).
double relative_tolerance(Precision precision, int64_t k);

// Rounds a value to the nearest number of the precision (round to nearest even).
double round_to_precision(double value, Precision precision);
// IEEE binary16 conversions (round to nearest even; overflow gives infinity).
uint16_t float_to_half(float value);
float half_to_float(uint16_t bits);

// Device representation of values already representable in the precision.
std::vector<unsigned char> pack_elements(const std::vector<double>& values, Precision precision);

// The problem's matrices as stored, densely, in the problem's order: A is M x K (K x M when
// transposed), B is K x N (N x K), C is M x N. A batch holds its matrices one after the other
// (entry b of A starts at b * M * K), whatever the device layout will be.
// With a bias in the epilogue, `bias` holds N values (one per column of C, shared by the batch),
// spread around -(alpha·K + beta) so that about half of the outputs are negative before the
// activation and both of its branches are checked; else it is empty.
struct HostMatrices {
  std::vector<double> a, b, c, bias;
};
HostMatrices make_inputs(const Problem& problem, uint64_t seed);

// Index of element (row, col) of a dense matrix with `rows` x `cols` in `order`.
inline int64_t stored_index(Order order, int64_t rows, int64_t cols, int64_t row, int64_t col) {
  return order == Order::kRowMajor ? row * cols + col : row + col * rows;
}

struct Verification {
  bool ok = false;
  double max_error = 0;  // max |C - Cref| / S over the outputs
  double tolerance = 0;  // relative_tolerance(precision, K)
  int64_t wrong = 0;     // outputs beyond tolerance
  int64_t checked = 0;   // outputs compared with the reference (all, unless rows were sampled)
  std::string message;   // empty when ok
};

// Which rows a Reference checks: all of them up to `full_check_limit` (M·N·K·batch), else the
// sample described above with bands of `sample_band` rows.
struct ReferenceOptions {
  int64_t full_check_limit = kFullCheckLimit;
  int64_t sample_band = kSampleBand;
};

class Reference {
 public:
  // Computes Cref and S once; `inputs` must come from make_inputs(problem, ...).
  Reference(const Problem& problem, const HostMatrices& inputs,
            const ReferenceOptions& options = {});

  // Checks a result C stored as the problem stores C (batch entries one after the other, as in
  // HostMatrices).
  Verification check(const std::vector<double>& c) const;
  // The same check on C as the device left it, without converting it: `bytes` holds elements of
  // `precision`, and batch entry e starts at element `starts[e]`.
  Verification check(const std::vector<unsigned char>& bytes, Precision precision,
                     const std::vector<int64_t>& starts) const;

  // Cref of batch entry `entry`: its row r is row rows()[r] of C (all rows unless sampled).
  const Eigen::MatrixXd& expected(int64_t entry = 0) const {
    return expected_[static_cast<size_t>(entry)];
  }
  const std::vector<int64_t>& rows() const { return rows_; }
  bool sampled() const { return static_cast<int64_t>(rows_.size()) < problem_.shape.m; }
  // What check() compares, in words: "all 4096 outputs", "130 of 4096 rows (all 4096 columns)",
  // with the number of GEMMs of a batch.
  std::string coverage() const;

 private:
  // check() over any storage: `at(e, index)` gives element `index` of entry e as a double,
  // `non_finite(e)` counts the entry's NaN and infinite elements.
  template <typename At, typename NonFinite>
  Verification check_with(At at, NonFinite non_finite, int64_t size) const;
  Problem problem_;
  std::vector<int64_t> rows_;              // the rows of C compared with the reference, ascending
  std::vector<Eigen::MatrixXd> expected_;  // M x N per batch entry
  std::vector<Eigen::MatrixXd> scale_;     // S, M x N per batch entry
  double tolerance_ = 0;
};

}  // namespace gemmtune
