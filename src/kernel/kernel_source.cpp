#include "src/kernel/kernel_source.hpp"

#include <filesystem>
#include <set>
#include <sstream>

#include "src/core/error.hpp"
#include "src/core/json_util.hpp"

namespace gemmtune {

namespace fs = std::filesystem;

namespace {

// The quoted name of an `#include "name"` line, or "" for any other line.
std::string include_target(const std::string& line) {
  size_t p = line.find_first_not_of(" \t");
  if (p == std::string::npos || line[p] != '#') return "";
  p = line.find_first_not_of(" \t", p + 1);
  if (p == std::string::npos || line.compare(p, 7, "include") != 0) return "";
  const size_t open = line.find('"', p + 7);
  if (open == std::string::npos) return "";
  const size_t close = line.find('"', open + 1);
  if (close == std::string::npos) return "";
  return line.substr(open + 1, close - open - 1);
}

void expand(const fs::path& path, std::set<std::string>& seen, std::ostringstream& out) {
  const std::string key = fs::weakly_canonical(path).string();
  if (!seen.insert(key).second) return;  // each file once, which also stops include cycles
  std::error_code ec;
  if (!fs::is_regular_file(path, ec)) throw invalid_file(path.string(), "kernel source not found");
  std::istringstream in(read_text_file(path.string()));
  std::string line;
  int lineno = 0;
  while (std::getline(in, line)) {
    ++lineno;
    const std::string target = include_target(line);
    if (target.empty()) {
      out << line << '\n';
      continue;
    }
    const fs::path included = path.parent_path() / target;
    if (!fs::is_regular_file(included, ec)) {
      throw invalid_file(path.string(), "line " + std::to_string(lineno) + " includes '" + target +
                                            "', which is not found beside it");
    }
    expand(included, seen, out);
  }
}

}  // namespace

std::string load_kernel_source(const std::string& dir, const std::string& file) {
  std::set<std::string> seen;
  std::ostringstream out;
  expand(fs::path(dir) / file, seen, out);
  return out.str();
}

int precision_define(Precision precision) {
  switch (precision) {
    case Precision::kFP64:
      return 64;
    case Precision::kFP16:
      return 16;
    case Precision::kFP16Acc32:
      return 1632;
    default:
      return 32;
  }
}

int batch_layout_define(const Problem& problem) {
  if (problem.batch == 1) return 0;
  return problem.batch_layout == BatchLayout::kOffsets ? 2 : 1;
}

std::string epilogue_defines(const Problem& problem) {
  const Epilogue e = parse_epilogue(problem.epilogue);
  if (e.none()) return "";
  const int bias = !e.bias ? 0 : problem.order == Order::kRowMajor ? 1 : 2;
  const int activation = e.activation == Activation::kRelu   ? 1
                         : e.activation == Activation::kGelu ? 2
                                                             : 0;
  return "-DBIAS=" + std::to_string(bias) + " -DACTIVATION=" + std::to_string(activation);
}

std::string build_options(const Configuration& config, Precision precision, bool trans_a,
                          bool trans_b, const std::string& extra, int batch_layout) {
  std::ostringstream out;
  for (const auto& [name, value] : config) out << "-D" << name << "=" << value << " ";
  out << "-DPRECISION=" << precision_define(precision) << " -DTRANSA=" << (trans_a ? 1 : 0)
      << " -DTRANSB=" << (trans_b ? 1 : 0);
  if (batch_layout != 0) out << " -DBATCH_LAYOUT=" << batch_layout;
  if (extra.find_first_not_of(" \t") != std::string::npos) out << " " << extra;
  return out.str();
}

std::string trim_build_log(const std::string& log, size_t max_lines, size_t max_chars) {
  std::istringstream in(log);
  std::string line, out;
  size_t lines = 0, dropped = 0;
  while (std::getline(in, line)) {
    while (!line.empty() && (line.back() == '\r' || line.back() == ' ')) line.pop_back();
    if (line.find_first_not_of(" \t") == std::string::npos) continue;
    if (lines >= max_lines || out.size() + line.size() + 1 > max_chars) {
      ++dropped;
      continue;
    }
    out += (out.empty() ? "" : "\n") + line;
    ++lines;
  }
  if (dropped) out += "\n(" + std::to_string(dropped) + " more lines of the build log cut)";
  return out;
}

}  // namespace gemmtune
