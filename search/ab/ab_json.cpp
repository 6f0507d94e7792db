// SPDX-License-Identifier: Apache-2.0
// JSON forms of the A/B records (search/ab/ab_protocol.hpp), as the decision log stores them.
#include "search/ab/ab_protocol.hpp"

namespace gemmtune {

// ---- JSON ----

void to_json(nlohmann::json& j, const SimplicityComparison& c) {
  j = {{"order", c.order},
       {"rank", c.rank},
       {"smaller", c.smaller},
       {"change_value", c.first_value},
       {"baseline_value", c.second_value},
       {"words", c.describe()}};
}

void from_json(const nlohmann::json& j, SimplicityComparison& c) {
  c.order = j.value("order", 0);
  c.rank = j.value("rank", "");
  c.smaller = j.value("smaller", "");
  c.first_value = j.value("change_value", int64_t{0});
  c.second_value = j.value("baseline_value", int64_t{0});
}

void to_json(nlohmann::json& j, const AbSettings& s) {
  j = {{"threshold", s.threshold}, {"min_pairs", s.min_pairs}, {"max_pairs", s.max_pairs}};
}

void from_json(const nlohmann::json& j, AbSettings& s) {
  s.threshold = j.value("threshold", 0.02);
  s.min_pairs = j.value("min_pairs", 5);
  s.max_pairs = j.value("max_pairs", 20);
}

void to_json(nlohmann::json& j, const AbStatistics& s) {
  j = {{"pairs", s.pairs},         {"gain", s.gain},   {"paired_spread", s.paired_spread},
       {"pooled_cv", s.pooled_cv}, {"noise", s.noise}, {"margin", s.margin}};
}

void from_json(const nlohmann::json& j, AbStatistics& s) {
  s.pairs = j.value("pairs", 0);
  s.gain = j.value("gain", 0.0);
  s.paired_spread = j.value("paired_spread", 0.0);
  s.pooled_cv = j.value("pooled_cv", 0.0);
  s.noise = j.value("noise", 0.0);
  s.margin = j.value("margin", 0.0);
}

void to_json(nlohmann::json& j, const Indicators& i) {
  nlohmann::json items = nlohmann::json::array();
  for (const auto& item : i.items) {
    nlohmann::json e = {{"name", item.name}, {"value", item.value}};
    if (!item.text.empty()) e["text"] = item.text;
    items.push_back(e);
  }
  j = {{"source", i.source}, {"items", items}};
}

void from_json(const nlohmann::json& j, Indicators& i) {
  i = Indicators{};
  i.source = j.value("source", "");
  for (const auto& e : j.value("items", nlohmann::json::array())) {
    i.items.push_back(
        {e.at("name").get<std::string>(), e.at("value").get<double>(), e.value("text", "")});
  }
}

void to_json(nlohmann::json& j, const AbSide& s) {
  j = {{"config", configuration_to_json(s.config)},
       {"status", to_string(s.status)},
       {"times_ms", s.times_ms},
       {"median_ms", s.median_ms},
       {"gflops", s.gflops},
       {"gflops_spread", s.gflops_spread},
       {"max_error", s.max_error},
       {"tolerance", s.tolerance},
       {"indicators", s.indicators}};
  if (!s.message.empty()) j["message"] = s.message;
}

void from_json(const nlohmann::json& j, AbSide& s) {
  s.config = configuration_from_json(j.at("config"));
  s.status = parse_status(j.value("status", "ok"));
  s.message = j.value("message", "");
  s.times_ms = j.value("times_ms", std::vector<double>{});
  s.median_ms = j.value("median_ms", 0.0);
  s.gflops = j.value("gflops", 0.0);
  s.gflops_spread = j.value("gflops_spread", 0.0);
  s.max_error = j.value("max_error", 0.0);
  s.tolerance = j.value("tolerance", 0.0);
  if (j.contains("indicators")) s.indicators = j.at("indicators").get<Indicators>();
}

void to_json(nlohmann::json& j, const AbRecord& r) {
  j = {{"date", r.date},
       {"problem", problem_json(r.problem, r.kernel)},
       {"change", r.change},
       {"baseline", r.baseline},
       {"changed", r.changed},
       {"stats", r.stats},
       {"simplicity", r.simplicity},
       {"decision", to_string(r.decision)},
       {"reason", to_string(r.reason)},
       {"explanation", r.explanation},
       {"evaluations", r.evaluations}};
}

void from_json(const nlohmann::json& j, AbRecord& r) {
  r.date = j.value("date", "");
  r.problem = j.at("problem").get<Problem>();
  r.kernel = kernel_in_problem_json(j.at("problem"));
  r.change = j.value("change", "");
  r.baseline = j.at("baseline").get<AbSide>();
  r.changed = j.at("changed").get<AbSide>();
  r.stats = j.value("stats", nlohmann::json::object()).get<AbStatistics>();
  r.simplicity = j.value("simplicity", nlohmann::json::object()).get<SimplicityComparison>();
  r.decision = parse_decision(j.at("decision").get<std::string>());
  r.reason = parse_decision_reason(j.at("reason").get<std::string>());
  r.explanation = j.value("explanation", "");
  r.evaluations = j.value("evaluations", 0);
}

}  // namespace gemmtune
