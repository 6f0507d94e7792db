// SPDX-License-Identifier: Apache-2.0
// The A/B logs (search/ab/ab_protocol.hpp): the Markdown changelog and the JSON-lines decision log.
#include <fcntl.h>
#include <unistd.h>

#include <cerrno>
#include <cmath>
#include <cstring>
#include <filesystem>

#include <fmt/format.h>

#include "search/ab/ab_protocol.hpp"
#include "src/core/error.hpp"
#include "src/core/json_util.hpp"

namespace gemmtune {

// ---- logs ----

namespace {

// Table cells hold one line without pipes.
std::string cell(std::string s) {
  std::string out;
  for (char c : s) {
    if (c == '|') {
      out += "\\|";
    } else if (c == '\n' || c == '\r') {
      out += ' ';
    } else {
      out += c;
    }
  }
  constexpr size_t kMax = 240;
  if (out.size() > kMax) out = out.substr(0, kMax) + "...";
  return out;
}

std::string side_rate(const AbSide& s) {
  if (s.status != Status::kOk) return to_string(s.status);
  if (s.times_ms.empty()) return "not measured";
  return fmt::format("{:.2f} ± {:.2f}", s.gflops, s.gflops_spread);
}

std::string format_number(double v) {
  if (std::fabs(v - std::round(v)) < 1e-9) return fmt::format("{}", static_cast<int64_t>(v));
  return fmt::format("{:.3g}", v);
}

std::string indicator_cell(const AbRecord& r) {
  // Names of the bottleneck report's items; only those present are shown.
  static const std::vector<std::pair<std::string, std::string>> labels = {
      {"lds", "LDS B"},
      {"work_group_size", "WG"},
      {"registers", "regs"},
      {"occupancy", "waves/SIMD"},
      {"work_per_thread", "MWI×NWI"},
      {"vector_width", "VW"},
  };
  std::string out;
  for (const auto& [name, label] : labels) {
    const auto a = r.baseline.indicators.get(name), b = r.changed.indicators.get(name);
    if (!a && !b) continue;
    const std::string va = a ? format_number(*a) : "?", vb = b ? format_number(*b) : "?";
    if (!out.empty()) out += ", ";
    out += label + " " + (va == vb ? va : va + "→" + vb);
  }
  return out.empty() ? "-" : out;
}

}  // namespace

std::string markdown_table_head() {
  return "| Date | Change | Result (GFLOPS, baseline → change) | Decision | Indicators "
         "(baseline → change) |\n"
         "|---|---|---|---|---|\n";
}

std::string markdown_row(const AbRecord& r) {
  std::string result = side_rate(r.baseline) + " → " + side_rate(r.changed);
  if (r.reason != DecisionReason::kChangeFailed && r.reason != DecisionReason::kBaselineFailed) {
    result += fmt::format(" ({:+.1f}%, noise ±{:.1f}%, {} pairs)", 100 * r.stats.gain,
                          100 * r.stats.noise, r.stats.pairs);
  }
  const std::string decision = "**" + to_string(r.decision) + "**: " + r.explanation;
  return fmt::format("| {} | `{}` | {} | {} | {} |\n", cell(r.date), cell(r.change), cell(result),
                     cell(decision), cell(indicator_cell(r)));
}

MarkdownChangelog::MarkdownChangelog(std::string path, const ChangelogHeader& header)
    : path_(std::move(path)) {
  std::error_code ec;
  const bool fresh =
      !std::filesystem::exists(path_, ec) || std::filesystem::file_size(path_, ec) == 0;
  std::string text = fresh ? "# " + header.title + "\n\n" : "\n## " + header.title + "\n\n";
  for (const auto& [name, value] : header.fields) text += "- " + name + ": " + value + "\n";
  if (!header.fields.empty()) text += "\n";
  write(text);
}

void MarkdownChangelog::write(const std::string& addition) {
  std::error_code ec;
  std::string content;
  if (std::filesystem::exists(path_, ec)) content = read_text_file(path_);
  write_file_atomic(path_, content + addition);
}

void MarkdownChangelog::append(const AbRecord& record) {
  std::string text;
  // A table needs a blank line between it and a paragraph above.
  if (!table_open_) text = (after_note_ ? "\n" : "") + markdown_table_head();
  table_open_ = true;
  after_note_ = false;
  write(text + markdown_row(record));
}

void MarkdownChangelog::note(const std::string& text) {
  write((table_open_ || after_note_ ? "\n" : "") + text + "\n");
  table_open_ = false;
  after_note_ = true;
}

DecisionLog::DecisionLog(const std::string& path) : path_(path) {
  fd_ = ::open(path.c_str(), O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0644);
  if (fd_ < 0)
    throw invalid_file(path, std::string("cannot open for appending: ") + std::strerror(errno));
}

DecisionLog::~DecisionLog() {
  if (fd_ >= 0) ::close(fd_);
}

void DecisionLog::append_json(const nlohmann::json& line) {
  const std::string text = line.dump() + "\n";
  size_t done = 0;
  while (done < text.size()) {
    const ssize_t n = ::write(fd_, text.data() + done, text.size() - done);
    if (n < 0) {
      if (errno == EINTR) continue;
      throw invalid_file(path_, std::string("cannot append: ") + std::strerror(errno));
    }
    done += static_cast<size_t>(n);
  }
  ::fsync(fd_);
}

void DecisionLog::append(const AbRecord& record) {
  nlohmann::json j = record;
  j["type"] = "decision";
  append_json(j);
}

}  // namespace gemmtune
