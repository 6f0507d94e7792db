// SPDX-License-Identifier: Apache-2.0
#include "src/kernel/kernel_source.hpp"

#include <filesystem>
#include <map>
#include <mutex>
#include <optional>
#include <set>
#include <sstream>

#include "src/core/error.hpp"
#include "src/core/json_util.hpp"
#include "src/kernel/gemm_view.hpp"

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

// Where the files of a template folder come from: the file system, or a table in memory.
struct SourceFolder {
  const SourceTable* table = nullptr;  // null: the file system
  // The text of `name` (a path on disk, or a key of the table), or nullopt when there is none.
  std::optional<std::string> read(const std::string& name) const {
    if (table) {
      auto it = table->find(name);
      if (it == table->end()) return std::nullopt;
      return it->second;
    }
    std::error_code ec;
    if (!fs::is_regular_file(name, ec)) return std::nullopt;
    return read_text_file(name);
  }
  // The name of `target` included by `from`: beside it.
  std::string beside(const std::string& from, const std::string& target) const {
    return (fs::path(from).parent_path() / target).lexically_normal().string();
  }
  std::string identity(const std::string& name) const {
    return table ? fs::path(name).lexically_normal().string() : fs::weakly_canonical(name).string();
  }
};

void expand(const SourceFolder& folder, const std::string& path, std::set<std::string>& seen,
            std::ostringstream& out) {
  if (!seen.insert(folder.identity(path)).second) return;  // once each, which also stops cycles
  const std::optional<std::string> text = folder.read(path);
  if (!text) throw invalid_file(path, "kernel source not found");
  std::istringstream in(*text);
  std::string line;
  int lineno = 0;
  while (std::getline(in, line)) {
    ++lineno;
    const std::string target = include_target(line);
    if (target.empty()) {
      out << line << '\n';
      continue;
    }
    const std::string included = folder.beside(path, target);
    if (!folder.read(included)) {
      throw invalid_file(path, "line " + std::to_string(lineno) + " includes '" + target +
                                   "', which is not found beside it");
    }
    expand(folder, included, seen, out);
  }
}

std::mutex& memory_folders_mutex() {
  static std::mutex mutex;
  return mutex;
}
std::map<std::string, const SourceTable*>& memory_folders() {
  static std::map<std::string, const SourceTable*> folders;
  return folders;
}

}  // namespace

void register_source_folder(const std::string& dir, const SourceTable* files) {
  std::lock_guard<std::mutex> lock(memory_folders_mutex());
  if (files) {
    memory_folders()[dir] = files;
  } else {
    memory_folders().erase(dir);
  }
}

std::string expand_kernel_source(const SourceTable& files, const std::string& file) {
  std::set<std::string> seen;
  std::ostringstream out;
  expand(SourceFolder{&files}, fs::path(file).lexically_normal().string(), seen, out);
  return out.str();
}

std::string load_kernel_source(const std::string& dir, const std::string& file) {
  {
    std::lock_guard<std::mutex> lock(memory_folders_mutex());
    auto it = memory_folders().find(dir);
    if (it != memory_folders().end()) return expand_kernel_source(*it->second, file);
  }
  std::set<std::string> seen;
  std::ostringstream out;
  expand(SourceFolder{}, (fs::path(dir) / file).string(), seen, out);
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

std::string pad_helper_options(Precision precision) {
  return "-DPRECISION=" + std::to_string(precision_define(precision)) +
         " -DPAD_ROWS=" + std::to_string(PadHelper::kRows);
}

int batch_layout_define(const Problem& problem) {
  if (problem.batch == 1) return 0;
  return problem.batch_layout == BatchLayout::kOffsets ? 2 : 1;
}

std::string epilogue_defines(const Problem& problem) {
  const Epilogue& e = problem.epilogue;
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

std::string kernel_build_options(const KernelSpec& spec, const Problem& problem,
                                 const Configuration& config, const DeviceLimits& limits,
                                 const std::string& profile_build_options) {
  const KernelView view = kernel_view(problem);
  // The epilogue's defines go before the profile's options, and a problem without one builds
  // exactly as before (same binary cache keys).
  const std::string epilogue = epilogue_defines(problem);
  std::string extra =
      epilogue.empty() ? profile_build_options : epilogue + " " + profile_build_options;
  if (const std::string cap = spec.register_cap_option(config, limits); !cap.empty()) {
    extra += " " + cap;
  }
  // Runtime parameters are kernel arguments: leaving them out of the defines makes every
  // configuration that differs only there the same program (one build, one binary cache entry).
  return build_options(KernelSpec::built_in(config, spec.runtime_parameters()), problem.precision,
                       view.trans_a, view.trans_b, extra, batch_layout_define(problem));
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
