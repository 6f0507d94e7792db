// SPDX-License-Identifier: Apache-2.0
#include "src/db/compare.hpp"

#include <cmath>
#include <cstdlib>
#include <sstream>

#include <fmt/format.h>

#include "src/core/error.hpp"

namespace gemmtune {

namespace {

std::string xml_escape(const std::string& s) {
  std::string out;
  for (char c : s) {
    switch (c) {
      case '&': out += "&amp;"; break;
      case '<': out += "&lt;"; break;
      case '>': out += "&gt;"; break;
      case '"': out += "&quot;"; break;
      case '\'': out += "&apos;"; break;
      default:
        // Control characters other than tab and newline are not allowed in XML 1.0.
        if (static_cast<unsigned char>(c) < 0x20 && c != '\t' && c != '\n') {
          out += ' ';
        } else {
          out += c;
        }
    }
  }
  return out;
}

std::string gflops_text(const std::optional<double>& v) {
  return v ? fmt::format("{:.1f}", *v) : std::string("-");
}

std::string ratio_text(const CompareRow& r) {
  return r.base_gflops && r.new_gflops && *r.base_gflops > 0 ? fmt::format("{:.3f}", r.ratio)
                                                             : std::string("-");
}

std::string summary_line(const CompareReport& report) {
  const int failures = report.failures();
  return fmt::format("{} entries, {} failing (threshold {:.1f} % beyond {:.0f} sigma of noise)",
                     report.rows.size(), failures, report.options.threshold * 100,
                     report.options.noise_sigmas);
}

}  // namespace

double parse_threshold(const std::string& raw) {
  std::string text;
  for (char c : raw) {
    if (c != ' ') text += c;
  }
  const bool percent = !text.empty() && text.back() == '%';
  if (percent) text.pop_back();
  char* end = nullptr;
  const double v = text.empty() ? NAN : std::strtod(text.c_str(), &end);
  if (text.empty() || end != text.c_str() + text.size() || !std::isfinite(v) || v < 0) {
    throw invalid_argument("threshold '" + raw + "' is not a percentage such as 3% or 0.03");
  }
  if (percent) return v / 100.0;
  if (v >= 1) {
    throw invalid_argument("threshold '" + raw + "' is ambiguous: write " + raw + "% or " +
                           fmt::format("{:g}", v / 100));
  }
  return v;
}

std::string to_string(CompareVerdict v) {
  switch (v) {
    case CompareVerdict::kFaster: return "faster";
    case CompareVerdict::kSame: return "same";
    case CompareVerdict::kNoise: return "slower (noise)";
    case CompareVerdict::kRegression: return "REGRESSION";
    case CompareVerdict::kFailed: return "FAILED";
    case CompareVerdict::kMissing: return "MISSING";
    case CompareVerdict::kNew: return "new";
    case CompareVerdict::kBaseFailed: return "base failed";
  }
  return "?";
}

bool is_failure(CompareVerdict v) {
  return v == CompareVerdict::kRegression || v == CompareVerdict::kFailed ||
         v == CompareVerdict::kMissing;
}

int CompareReport::failures() const {
  int n = 0;
  for (const auto& r : rows) n += is_failure(r.verdict) ? 1 : 0;
  return n;
}

CompareReport compare_databases(const Database& base, const Database& now,
                                const CompareOptions& options) {
  CompareReport report;
  report.options = options;
  report.base_device = base.device.name;
  report.new_device = now.device.name;
  for (const auto& b : base.entries()) {
    CompareRow row;
    row.key = b.key;
    row.base_gflops = b.gflops;
    const auto* n = now.find(b.key);
    if (b.status != Status::kOk) {
      row.verdict = CompareVerdict::kBaseFailed;
      row.note = "baseline status " + to_string(b.status);
      if (n) row.new_gflops = n->gflops;
      report.rows.push_back(row);
      continue;
    }
    if (!n) {
      row.verdict = CompareVerdict::kMissing;
      row.note = "not in the new database";
      report.rows.push_back(row);
      continue;
    }
    row.new_gflops = n->gflops;
    if (n->status != Status::kOk) {
      row.verdict = CompareVerdict::kFailed;
      row.note = to_string(n->status) + (n->message.empty() ? "" : ": " + n->message);
      report.rows.push_back(row);
      continue;
    }
    // Databases are range-checked on load (Database::from_json): rates are positive and the
    // coefficients of variation are not negative, so the noise band cannot be widened by a sign.
    row.ratio = b.gflops > 0 ? n->gflops / b.gflops : 0;
    row.noise = std::sqrt(b.time.cv * b.time.cv + n->time.cv * n->time.cv);
    row.allowed = options.threshold + options.noise_sigmas * row.noise;
    const double slowdown = 1.0 - row.ratio;
    if (slowdown > row.allowed) {
      row.verdict = CompareVerdict::kRegression;
      row.note = fmt::format("{:.1f} % slower, {:.1f} % allowed", slowdown * 100,
                             row.allowed * 100);
    } else if (slowdown > options.threshold) {
      row.verdict = CompareVerdict::kNoise;
      row.note = fmt::format("{:.1f} % slower, within noise ({:.1f} %)", slowdown * 100,
                             row.noise * 100);
    } else if (-slowdown > row.allowed) {
      row.verdict = CompareVerdict::kFaster;
    } else {
      row.verdict = CompareVerdict::kSame;
    }
    if (b.parameters != n->parameters) {
      row.note += std::string(row.note.empty() ? "" : "; ") + "parameters differ";
    }
    report.rows.push_back(row);
  }
  for (const auto& n : now.entries()) {
    if (base.find(n.key)) continue;
    CompareRow row;
    row.key = n.key;
    row.new_gflops = n.gflops;
    row.verdict = CompareVerdict::kNew;
    row.note = "not in the baseline";
    report.rows.push_back(row);
  }
  return report;
}

std::optional<std::string> device_mismatch(const Database& base, const Database& now) {
  if (base.device.same_hardware(now.device)) return std::nullopt;
  return "'" + base.device.name + "' (" + base.device.vendor + ") and '" + now.device.name + "' (" +
         now.device.vendor + ")";
}

std::string to_table(const CompareReport& report) {
  std::ostringstream out;
  out << fmt::format("{:<44} {:>10} {:>10} {:>7} {:>7} {:<15} {}\n", "entry", "base GFLOPS",
                     "new GFLOPS", "ratio", "noise%", "verdict", "note");
  for (const auto& r : report.rows) {
    out << fmt::format("{:<44} {:>10} {:>10} {:>7} {:>7.2f} {:<15} {}\n", r.key.to_string(),
                       gflops_text(r.base_gflops), gflops_text(r.new_gflops), ratio_text(r),
                       r.noise * 100, to_string(r.verdict), r.note);
  }
  out << summary_line(report) << "\n";
  return out.str();
}

std::string to_markdown(const CompareReport& report) {
  std::ostringstream out;
  out << "## gemmtune regression check\n\n";
  out << fmt::format("Baseline `{}` ({}) against `{}` ({}).\n\n", report.base_name,
                     report.base_device, report.new_name, report.new_device);
  out << "| entry | base GFLOPS | new GFLOPS | ratio | noise % | verdict | note |\n";
  out << "| --- | ---: | ---: | ---: | ---: | --- | --- |\n";
  for (const auto& r : report.rows) {
    const std::string verdict =
        is_failure(r.verdict) ? "**" + to_string(r.verdict) + "**" : to_string(r.verdict);
    out << fmt::format("| {} | {} | {} | {} | {:.2f} | {} | {} |\n", r.key.to_string(),
                       gflops_text(r.base_gflops), gflops_text(r.new_gflops), ratio_text(r),
                       r.noise * 100, verdict, r.note);
  }
  out << "\n" << summary_line(report) << "\n";
  return out.str();
}

std::string to_junit(const CompareReport& report) {
  std::ostringstream out;
  int tests = 0, skipped = 0;
  for (const auto& r : report.rows) {
    ++tests;
    if (r.verdict == CompareVerdict::kNew || r.verdict == CompareVerdict::kBaseFailed) ++skipped;
  }
  out << "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n";
  out << fmt::format(
      "<testsuites>\n  <testsuite name=\"gemmtune-compare\" tests=\"{}\" failures=\"{}\" "
      "errors=\"0\" skipped=\"{}\">\n",
      tests, report.failures(), skipped);
  for (const auto& r : report.rows) {
    out << fmt::format("    <testcase classname=\"gemmtune.{}\" name=\"{}\">\n",
                       xml_escape(r.key.kernel), xml_escape(r.key.to_string()));
    const std::string detail =
        fmt::format("base {} GFLOPS, new {} GFLOPS, ratio {}, noise {:.2f} %, allowed {:.2f} %",
                    gflops_text(r.base_gflops), gflops_text(r.new_gflops), ratio_text(r),
                    r.noise * 100, r.allowed * 100);
    if (is_failure(r.verdict)) {
      out << fmt::format("      <failure message=\"{}\" type=\"{}\">{}</failure>\n",
                         xml_escape(to_string(r.verdict) + ": " + r.note),
                         xml_escape(to_string(r.verdict)), xml_escape(detail));
    } else if (r.verdict == CompareVerdict::kNew || r.verdict == CompareVerdict::kBaseFailed) {
      out << fmt::format("      <skipped message=\"{}\"/>\n", xml_escape(r.note));
    } else {
      out << fmt::format("      <system-out>{}</system-out>\n",
                         xml_escape(to_string(r.verdict) + "; " + detail));
    }
    out << "    </testcase>\n";
  }
  out << "  </testsuite>\n</testsuites>\n";
  return out.str();
}

void to_json(nlohmann::json& j, const CompareRow& row) {
  j = {{"key", row.key},
       {"base_gflops", row.base_gflops ? nlohmann::json(*row.base_gflops) : nlohmann::json()},
       {"new_gflops", row.new_gflops ? nlohmann::json(*row.new_gflops) : nlohmann::json()},
       {"ratio", row.ratio},
       {"noise", row.noise},
       {"allowed_slowdown", row.allowed},
       {"verdict", to_string(row.verdict)},
       {"failure", is_failure(row.verdict)},
       {"note", row.note}};
}

void to_json(nlohmann::json& j, const CompareReport& report) {
  j = {{"base", report.base_name},
       {"new", report.new_name},
       {"threshold", report.options.threshold},
       {"noise_sigmas", report.options.noise_sigmas},
       {"failures", report.failures()},
       {"rows", report.rows}};
}

}  // namespace gemmtune
