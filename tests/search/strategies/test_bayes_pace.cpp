// SPDX-License-Identifier: Apache-2.0
// Hidden benchmark (run by hand with the [.tune] tag): how long the bayes strategy takes to
// propose and to learn on xgemm_fast's `gpu` space, the space a default GPU search walks, driven
// the way the tuner drives it: a fixed number of proposals in flight, each result told as it
// comes, and GROUPM's runtime siblings of each result claimed and told after it. The times are
// SYNTHETIC (a smooth function of the encoded configuration with ruggedness); only the
// strategy's own cost is measured, on this machine.
#include <catch2/catch.hpp>

#include <chrono>
#include <cmath>
#include <cstdlib>
#include <deque>
#include <iostream>

#include <fmt/format.h>

#include "search/strategies/strategies.hpp"
#include "tests/test_support.hpp"

// The file's own namespace: the test files compile in unity batches.
namespace gemmtune_tests::search_strategies_test_bayes_pace {

using namespace gemmtune;

namespace {

using Clock = std::chrono::steady_clock;

double seconds_between(Clock::time_point a, Clock::time_point b) {
  return std::chrono::duration<double>(b - a).count();
}

int env_int(const char* name, int fallback) {
  const char* v = std::getenv(name);
  return v ? std::atoi(v) : fallback;
}

// A made-up time (ms) for row `i`: a bowl around a fixed point of the encoded space with a
// deterministic ruggedness of a few percent.
double synthetic_ms(const SearchSpace& space, size_t i) {
  std::vector<double> x(space.dimensions().size() + space.feature_names().size());
  space.encode_with_features(i, x.data());
  double e = 0;
  for (size_t d = 0; d < x.size(); ++d) {
    const double c = 0.3 + 0.4 * double((d * 7) % 5) / 4.0;
    e += (x[d] - c) * (x[d] - c) * (1.0 + double(d % 3));
  }
  Rng r(i * 0x9e3779b97f4a7c15ULL + 1);
  return std::exp(e) * (1.0 + 0.03 * (2 * r.uniform() - 1));
}

Observation observe(const SearchSpace& space, size_t i) {
  Observation o;
  o.index = i;
  o.ok = true;
  o.time_ms = synthetic_ms(space, i);
  return o;
}

}  // namespace

TEST_CASE("bayes proposal pace on the xgemm_fast gpu space", "[.tune]") {
  static const KernelSpec spec =
      KernelSpec::load(test::source_path("kernel_templates/xgemm_fast.json"));
  DeviceLimits limits;
  limits.max_work_group_size = 1024;
  limits.local_mem_bytes = 48 * 1024;
  limits.max_work_item_sizes = {1024, 1024, 64};
  limits.register_cap_option = "-cl-nv-maxrregcount=";
  limits.register_cap_known = true;
  const Context context{{"ELEM_BYTES", 4}};
  SearchSpace space = SearchSpace::from_param_space(ParamSpace(spec, "gpu", limits, context));
  space.add_spec_features(spec, context);
  const size_t groupm = [&] {
    for (size_t p = 0; p < space.parameters().size(); ++p) {
      if (space.parameters()[p].name == "GROUPM") return p;
    }
    return size_t(0);
  }();

  const int proposals = env_int("PACE_PROPOSALS", 1200);
  const size_t in_flight = size_t(env_int("PACE_IN_FLIGHT", 16));
  auto searcher = make_searcher("bayes", space, 7, {});
  std::deque<size_t> flight;
  double ask_s = 0, tell_s = 0;
  size_t told = 0;
  int asked = 0;
  const auto start = Clock::now();
  while (asked < proposals) {
    if (flight.size() < in_flight) {
      const auto t0 = Clock::now();
      const std::vector<size_t> fresh = searcher->ask(std::min<size_t>(
          in_flight - flight.size(), searcher->max_batch(in_flight) - searcher->pending_count()));
      ask_s += seconds_between(t0, Clock::now());
      asked += int(fresh.size());
      flight.insert(flight.end(), fresh.begin(), fresh.end());
      if (fresh.empty() && flight.empty()) break;
    }
    if (flight.empty()) continue;
    const size_t row = flight.front();
    flight.pop_front();
    const auto t0 = Clock::now();
    searcher->tell(observe(space, row));
    ++told;
    // GROUPM 1 is built in; the others are runtime siblings of a row built with one of them.
    if (space.parameters()[groupm].values[size_t(space.level(row, groupm))] != 1) {
      Configuration c = space.config(row);
      for (int64_t v : space.parameters()[groupm].values) {
        if (v == 1 || v == c.at("GROUPM")) continue;
        Configuration s = c;
        s["GROUPM"] = v;
        const auto i = space.index_of(s);
        if (i && searcher->claim(*i)) {
          searcher->tell(observe(space, *i));
          ++told;
        }
      }
    }
    tell_s += seconds_between(t0, Clock::now());
  }
  const double all_s = seconds_between(start, Clock::now());
  const double best = synthetic_ms(space, *searcher->best_index());
  std::cout << fmt::format(
      "space {} rows; {} proposals, {} results told; ask {:.2f} s ({:.2f} ms a proposal), tell "
      "{:.2f} s; {:.2f} ms a proposal in all; best {:.4f}\n",
      space.size(), asked, told, ask_s, 1e3 * ask_s / asked, tell_s, 1e3 * all_s / asked, best);
  CHECK(asked == proposals);
}

}  // namespace gemmtune_tests::search_strategies_test_bayes_pace
