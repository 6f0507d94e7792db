// SPDX-License-Identifier: Apache-2.0
// Text helpers of the exporters (export_internal.hpp).
#include <algorithm>
#include <cctype>

#include <fmt/format.h>

#include "src/core/text.hpp"
#include "src/core/version.hpp"
#include "src/db/export_internal.hpp"

namespace gemmtune::export_detail {

std::string upper(std::string s) {
  std::transform(s.begin(), s.end(), s.begin(), [](unsigned char c) { return std::toupper(c); });
  return s;
}

std::string ident(const std::string& s) {
  std::string out;
  for (char c : s) out += std::isalnum(static_cast<unsigned char>(c)) ? c : '_';
  return out;
}

std::string problem_ident(const EntryKey& k) {
  std::string out = k.layout;
  if (k.order != Order::kRowMajor) out += "_col";
  if (k.batch > 1) out += "_b" + std::to_string(k.batch) + "_" + to_string(k.batch_layout);
  out += "_" + k.shape.to_string();
  if (const std::string e = to_string(k.epilogue); !e.empty()) out += "_" + e;
  return lower(ident(out));
}

std::string entry_ident(const EntryKey& k) {
  std::string out = k.kernel + "_fp" + to_string(k.precision) + "_" +
                    (k.order == Order::kRowMajor ? "row" : "col") + "_" + k.layout + "_b" +
                    std::to_string(k.batch) + "_" + k.shape.to_string();
  if (k.batch > 1) out += "_" + to_string(k.batch_layout);
  if (const std::string e = to_string(k.epilogue); !e.empty()) out += "_" + e;
  return lower(ident(out));
}

std::string c_escape(const std::string& s) {
  std::string out;
  for (char c : s) {
    switch (c) {
      case '"':
        out += "\\\"";
        break;
      case '\\':
        out += "\\\\";
        break;
      case '\n':
        out += "\\n";
        break;
      default:
        if (static_cast<unsigned char>(c) < 0x20) {
          out += fmt::format("\\{:03o}", static_cast<unsigned char>(c));
        } else {
          out += c;
        }
    }
  }
  return out;
}

std::string comment_safe(std::string s) {
  for (size_t p; (p = s.find("*/")) != std::string::npos;) s.replace(p, 2, "* /");
  for (auto& c : s) {
    if (c == '\n' || c == '\r') c = ' ';
  }
  return s;
}

double entry_time_ms(const DatabaseEntry& e) {
  return e.time.kernel_median_ms > 0 ? e.time.kernel_median_ms : e.time.median_ms;
}

std::string join(const std::vector<std::string>& v, const std::string& sep) {
  std::string out;
  for (size_t i = 0; i < v.size(); ++i) out += (i ? sep : "") + v[i];
  return out;
}

std::string header_comment_lines(const Database& db, const std::string& source,
                                 const std::string& prefix) {
  std::string out;
  out += prefix + fmt::format("Tuned GEMM parameters for {} ({}), profile {}.\n",
                              comment_safe(db.device.name), comment_safe(db.device.vendor),
                              comment_safe(db.device.profile));
  out +=
      prefix + fmt::format("Driver {}. Exported by gemmtune {} from {}.\n",
                           comment_safe(db.device.driver_version), version(), comment_safe(source));
  return out;
}

}  // namespace gemmtune::export_detail
