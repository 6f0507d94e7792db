#include "search/tuning/tuner.hpp"

#include <algorithm>
#include <chrono>
#include <deque>

#include <spdlog/spdlog.h>

namespace gemmtune {

bool better_result(const Result& candidate, const std::optional<Result>& best, double flops) {
  const double t = result_time_ms(candidate, flops);
  if (!candidate.ok() || t <= 0) return false;
  return !best || t < result_time_ms(*best, flops);
}

TuneOutcome run_search(Evaluator& evaluator, const Problem& problem, const SearchSpace& space,
                       Searcher& searcher, const TuneSettings& settings) {
  using clock = std::chrono::steady_clock;
  const auto start = clock::now();
  const double flops = problem.flops();
  auto elapsed = [&] { return std::chrono::duration<double>(clock::now() - start).count(); };

  TuneOutcome out;
  TuneProgress progress;
  progress.limit = settings.stop.eval_limit(space.size());

  // Whether the searcher took `r` (a result of an earlier run) as one of its evaluations.
  auto tell_known = [&](const Result& r) {
    const auto index = space.index_of(r.config);
    if (!index || searcher.seen(*index)) return false;  // not in this space, or recorded twice
    searcher.tell(*index, r, flops);
    ++out.evaluations;
    if (!r.ok()) ++out.failed;
    if (better_result(r, out.best, flops)) out.best = r;
    return true;
  };
  for (const auto& r : settings.known) {
    if (tell_known(r)) {
      ++out.resumed;
    } else if (!space.index_of(r.config)) {
      ++out.not_in_space;
    }
  }
  // The journal gets them too: it stays the whole record of this search (and a replay file).
  for (const auto& r : settings.cached) {
    if (!tell_known(r)) continue;
    ++out.cached;
    if (settings.journal) settings.journal->append(problem, r, 0);
  }
  if (out.not_in_space > 0) {
    spdlog::warn("{} journalled results are not in this space; ignored", out.not_in_space);
  }

  std::deque<size_t> queue;
  std::vector<Configuration> warm;
  for (const auto& c : settings.warm_start) {
    const auto index = space.index_of(c);
    if (!index || !searcher.claim(*index)) continue;
    queue.push_back(*index);
    warm.push_back(c);
  }
  out.warm_started = warm.size();
  if (!warm.empty()) evaluator.prepare(problem, warm);
  while (true) {
    if (settings.interrupt && settings.interrupt->load()) {
      out.interrupted = true;
      out.stop_reason = "interrupted";
      break;
    }
    if (auto why = settings.stop.reached(out.evaluations, elapsed(), space.size())) {
      out.stop_reason = *why;
      break;
    }
    // Keep `lookahead` proposals in flight, as many as the strategy takes now (it may take more
    // as it learns), never more than the budget has room for.
    const size_t lookahead =
        std::max<size_t>(1, std::min(settings.lookahead, searcher.max_batch()));
    const size_t room = progress.limit > out.evaluations ? progress.limit - out.evaluations : 0;
    const size_t target = std::min(lookahead, room);
    if (queue.size() < target) {
      const auto fresh = searcher.ask(target - queue.size());
      if (!fresh.empty()) {
        std::vector<Configuration> configs;
        for (size_t i : fresh) configs.push_back(space.config(i));
        evaluator.prepare(problem, configs);
        queue.insert(queue.end(), fresh.begin(), fresh.end());
      }
    }
    if (queue.empty()) {
      out.stop_reason = "the strategy has nothing more to propose";
      break;
    }
    out.max_in_flight = std::max(out.max_in_flight, queue.size());
    const size_t index = queue.front();
    queue.pop_front();
    const Configuration config = space.config(index);
    Result r = evaluator.evaluate(problem, config);
    r.config = config;
    ++out.evaluations;
    ++out.measured;
    if (settings.journal) settings.journal->append(problem, r, elapsed());
    if (settings.on_measured) settings.on_measured(r);
    searcher.tell(index, r, flops);
    if (!r.ok()) ++out.failed;
    if (r.ok()) ++out.verified;
    const bool improved = better_result(r, out.best, flops);
    if (improved) out.best = r;

    if (settings.on_progress) {
      progress.done = out.evaluations;
      progress.failed = out.failed;
      progress.measured = out.measured;
      progress.elapsed_s = elapsed();
      const double per_eval = progress.elapsed_s / double(out.measured);
      double remaining =
          per_eval * double(progress.limit - std::min(progress.limit, out.evaluations));
      if (settings.stop.time_budget_s > 0) {
        remaining =
            std::min(remaining, std::max(0.0, settings.stop.time_budget_s - progress.elapsed_s));
      }
      progress.remaining_s = remaining;
      progress.best = out.best;
      progress.last = &r;
      progress.new_best = improved;
      settings.on_progress(progress);
    }
  }
  out.elapsed_s = elapsed();
  return out;
}

}  // namespace gemmtune
