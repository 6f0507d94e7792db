// SPDX-License-Identifier: Apache-2.0
#include "src/core/workload.hpp"

#include <algorithm>
#include <cmath>
#include <fstream>
#include <sstream>

#include "src/core/error.hpp"

namespace gemmtune {

std::vector<WorkloadShape> read_workload(const std::string& path) {
  std::ifstream in(path);
  if (!in) throw invalid_file(path, "cannot open the workload file");
  std::vector<WorkloadShape> out;
  std::string line;
  int lineno = 0;
  while (std::getline(in, line)) {
    ++lineno;
    if (auto h = line.find('#'); h != std::string::npos) line = line.substr(0, h);
    std::istringstream words(line);
    std::string shape_text, weight_text, extra;
    if (!(words >> shape_text)) continue;
    const std::string where = "line " + std::to_string(lineno) + ": ";
    WorkloadShape w;
    try {
      w.shape = parse_shape(shape_text);
    } catch (const Error& e) {
      throw invalid_file(path, where + e.what());
    }
    if (words >> weight_text) {
      size_t used = 0;
      try {
        w.weight = std::stod(weight_text, &used);
      } catch (const std::exception&) {
        used = 0;
      }
      if (used != weight_text.size() || !std::isfinite(w.weight) || w.weight <= 0) {
        throw invalid_file(path, where + "weight '" + weight_text + "' is not a positive number");
      }
    }
    if (words >> extra) throw invalid_file(path, where + "unexpected '" + extra + "'");
    auto same = std::find_if(out.begin(), out.end(),
                             [&](const WorkloadShape& o) { return o.shape == w.shape; });
    if (same != out.end()) {
      same->weight += w.weight;
    } else {
      out.push_back(w);
    }
  }
  if (out.empty()) throw invalid_file(path, "holds no shape");
  return out;
}

std::vector<double> weighted_shares(const std::vector<WorkloadShape>& workload, double total,
                                    double minimum) {
  double sum = 0;
  for (const auto& w : workload) sum += w.weight;
  std::vector<double> shares;
  for (const auto& w : workload) shares.push_back(std::max(minimum, total * w.weight / sum));
  return shares;
}

}  // namespace gemmtune
