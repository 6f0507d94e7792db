// SPDX-License-Identifier: Apache-2.0
// The problem identity: every field of Problem tells problems apart, and every key derives from it.
#include <catch2/catch.hpp>

#include <cmath>
#include <functional>
#include <limits>
#include <vector>

#include "src/core/problem_key.hpp"

// The file's own namespace: the test files compile in unity batches.
namespace gemmtune_tests::src_core_test_problem_key {

using namespace gemmtune;

namespace {

struct FieldChange {
  const char* field;
  std::function<void(Problem&)> change;
};

// One change per data member of Problem (and of its Shape and Epilogue). The structured binding
// below fails to compile when Problem gains a member: add a change for it here, and to the
// identity (fields() in src/core/problem_key.cpp), in the same commit.
std::vector<FieldChange> field_changes() {
  Problem p;
  auto& [shape, order, trans_a, trans_b, alpha, beta, precision, batch, batch_layout, epilogue] = p;
  auto& [m, n, k] = shape;
  auto& [bias, activation] = epilogue;
  (void)order, (void)trans_a, (void)trans_b, (void)alpha, (void)beta;
  (void)precision, (void)batch, (void)batch_layout, (void)m, (void)n, (void)k, (void)bias;
  (void)activation;
  return {
      {"shape.m", [](Problem& q) { q.shape.m += 1; }},
      {"shape.n", [](Problem& q) { q.shape.n += 1; }},
      {"shape.k", [](Problem& q) { q.shape.k += 1; }},
      {"order", [](Problem& q) { q.order = Order::kColMajor; }},
      {"trans_a", [](Problem& q) { q.trans_a = true; }},
      {"trans_b", [](Problem& q) { q.trans_b = true; }},
      {"alpha", [](Problem& q) { q.alpha = 2.0; }},
      {"beta", [](Problem& q) { q.beta = 1.0; }},
      {"precision", [](Problem& q) { q.precision = Precision::kFP64; }},
      {"batch", [](Problem& q) { q.batch += 1; }},
      {"batch_layout", [](Problem& q) { q.batch_layout = BatchLayout::kOffsets; }},
      {"epilogue.bias", [](Problem& q) { q.epilogue.bias = true; }},
      {"epilogue.activation", [](Problem& q) { q.epilogue.activation = Activation::kGelu; }},
  };
}

// A batch, so that the batch layout means something.
Problem base() {
  Problem p;
  p.shape = {64, 48, 32};
  p.batch = 4;
  return p;
}

}  // namespace

TEST_CASE("two problems that differ in any one field have different identities", "[problem_key]") {
  const Problem a = base();
  for (const auto& f : field_changes()) {
    INFO(f.field);
    Problem b = a;
    f.change(b);
    const ProblemKey ka(a), kb(b);
    CHECK(ka != kb);
    CHECK(ka.to_string() != kb.to_string());
    CHECK((ka < kb) != (kb < ka));
  }
  CHECK(ProblemKey(a) == ProblemKey(base()));
  CHECK(ProblemKey(a).to_string() == ProblemKey(base()).to_string());
}

TEST_CASE("a key leaves out exactly the parts it names", "[problem_key]") {
  const Problem a = base();
  const std::vector<std::pair<unsigned, std::vector<const char*>>> ignored = {
      {kWithoutShape, {"shape.m", "shape.n", "shape.k"}},
      {kWithoutScaling, {"alpha", "beta"}},
      {kWithoutBatch, {"batch", "batch_layout"}},
  };
  for (const auto& [without, names] : ignored) {
    for (const auto& f : field_changes()) {
      INFO(f.field << " without " << without);
      Problem b = a;
      f.change(b);
      const bool left_out = std::find_if(names.begin(), names.end(), [&](const char* n) {
                              return std::string(n) == f.field;
                            }) != names.end();
      CHECK((ProblemKey(a, without) == ProblemKey(b, without)) == left_out);
      CHECK((ProblemKey(a, without).to_string() == ProblemKey(b, without).to_string()) == left_out);
    }
  }
}

TEST_CASE("the identity's spelling is the one journals and caches were keyed by", "[problem_key]") {
  Problem p;
  p.shape = {64, 64, 64};
  // The evaluation cache names its files after this text: a change of spelling would orphan them.
  CHECK(ProblemKey(p).to_string() == "64x64x64|row|NN|32|1|0|1|");
  p.batch = 8;
  CHECK(ProblemKey(p).to_string() == "64x64x64|row|NN|32|1|0|8|");
  p.batch_layout = BatchLayout::kOffsets;
  p.epilogue = parse_epilogue("relu,bias");
  p.alpha = 0.5;
  CHECK(ProblemKey(p).to_string() == "64x64x64|row|NN|32|0.5|0|8|bias,relu|offsets");
  CHECK(ProblemKey(p, kFamily).to_string() == "row|NN|32|8|bias,relu|offsets");
}

TEST_CASE("a single GEMM has one identity whatever batch layout it names", "[problem_key]") {
  Problem strided;
  strided.shape = {16, 16, 16};
  Problem offsets = strided;
  offsets.batch_layout = BatchLayout::kOffsets;
  CHECK(ProblemKey(strided) == ProblemKey(offsets));
  CHECK(ProblemKey(strided).to_string() == ProblemKey(offsets).to_string());
}

TEST_CASE("a NaN scaling still equals itself and -0 is not +0", "[problem_key]") {
  Problem a = base();
  a.alpha = std::numeric_limits<double>::quiet_NaN();
  CHECK(ProblemKey(a) == ProblemKey(a));
  Problem plus = base(), minus = base();
  minus.beta = -0.0;
  CHECK(ProblemKey(plus) != ProblemKey(minus));
  CHECK(ProblemKey(plus).to_string() != ProblemKey(minus).to_string());
}

}  // namespace gemmtune_tests::src_core_test_problem_key
