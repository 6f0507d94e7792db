// SPDX-License-Identifier: Apache-2.0
#include "src/core/problem_key.hpp"

#include <cstdint>
#include <cstring>
#include <tuple>

#include <fmt/format.h>

namespace gemmtune {

namespace {

// Bit patterns: a NaN alpha is still equal to itself, and -0 is not +0 (as their spellings).
uint64_t bits_of(double v) {
  uint64_t b = 0;
  std::memcpy(&b, &v, sizeof b);
  return b;
}

// The identity's fields in its order. Every data member of Problem (and of its Shape and
// Epilogue) is named by a structured binding, which fails to compile when a member is added:
// whoever adds one must decide here whether it tells problems apart, and add it to the identity
// test (tests/src/core/test_problem_key.cpp).
auto fields(const Problem& p) {
  const auto& [shape, order, trans_a, trans_b, alpha, beta, precision, batch, batch_layout,
               epilogue] = p;
  const auto& [m, n, k] = shape;
  const auto& [bias, activation] = epilogue;
  return std::make_tuple(precision, order, trans_a, trans_b, batch, batch_layout, bias, activation,
                         m, n, k, bits_of(alpha), bits_of(beta));
}

}  // namespace

ProblemKey::ProblemKey(const Problem& p, unsigned without) : p_(p), without_(without) {
  if (without & kWithoutShape) p_.shape = Shape{};
  if (without & kWithoutScaling) {
    p_.alpha = Problem{}.alpha;
    p_.beta = Problem{}.beta;
  }
  if (without & kWithoutBatch) p_.batch = 1;
  // A single GEMM has no batch layout: one key whatever was asked.
  if (p_.batch <= 1) p_.batch_layout = BatchLayout::kStrided;
}

std::string ProblemKey::to_string() const {
  std::string out;
  auto add = [&out](const std::string& item) {
    if (!out.empty()) out += '|';
    out += item;
  };
  if (!(without_ & kWithoutShape)) add(p_.shape.to_string());
  add(p_.order_name());
  add(p_.layout());
  add(gemmtune::to_string(p_.precision));
  if (!(without_ & kWithoutScaling)) {
    add(fmt::format("{}", p_.alpha));
    add(fmt::format("{}", p_.beta));
  }
  if (!(without_ & kWithoutBatch)) add(std::to_string(p_.batch));
  out += '|' + gemmtune::to_string(p_.epilogue);  // may be empty: the separator stays
  if (p_.batch_layout != BatchLayout::kStrided) add(gemmtune::to_string(p_.batch_layout));
  return out;
}

bool ProblemKey::operator==(const ProblemKey& o) const {
  return without_ == o.without_ && fields(p_) == fields(o.p_);
}

bool ProblemKey::operator<(const ProblemKey& o) const {
  return std::make_tuple(without_, fields(p_)) < std::make_tuple(o.without_, fields(o.p_));
}

std::string problem_key(const std::string& kernel, const Problem& p) {
  return kernel + "|" + ProblemKey(p).to_string();
}

}  // namespace gemmtune
