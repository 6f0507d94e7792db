// SPDX-License-Identifier: Apache-2.0
#include <fmt/format.h>

#include "src/bench/bench_suite.hpp"
#include "src/bench/suite_internal.hpp"

namespace gemmtune {

using suite::first_line;

namespace {

std::string join(const std::vector<std::string>& items) {
  std::string out;
  for (const auto& i : items) out += (out.empty() ? "" : ", ") + i;
  return out;
}

std::string fixed(double v, int digits) {
  return fmt::format("{:.{}f}", v, digits);
}

// A rate with one decimal, or two significant digits below 1, so that a measured rate never
// reads as 0.0 (a tiny shape on a slow device runs at hundredths of a GFLOPS).
std::string rate(double v) {
  return v >= 1 || v <= 0 ? fixed(v, 1) : fmt::format("{:.2g}", v);
}

// A side's rate by `gflops` of it, or why there is none.
std::string side_rate(const SideResult& s, double gflops) {
  if (!s.available) return "n/a";
  if (s.status == "wrong_result") return "WRONG";
  if (s.status != "ok") return "FAILED";
  return rate(gflops);
}

std::string side_gflops(const SideResult& s) {
  return side_rate(s, s.gflops);
}

// On the GPU clock; marked where the device's events failed the timer check.
std::string side_gpu_gflops(const SideResult& s) {
  const std::string r = side_rate(s, s.gpu_gflops);
  return s.ok() && s.gpu.clock == TimingClock::kHostQueued ? r + " (host clock)" : r;
}

// Each side's host cost per call in microseconds, "-" where the side did not run.
std::string host_costs(const SuiteRow& r) {
  auto us = [](const SideResult& s) {
    return s.ok() && s.host_ms > 0 ? fmt::format("{:.1f}", s.host_ms * 1e3) : std::string("-");
  };
  return us(r.gemmtune) + " / " + us(r.library) + " / " + us(r.clblast);
}

std::string source_of(const SuiteRow& r) {
  if (!r.chosen) return "-";
  const Candidate& c = *r.chosen;
  std::string s;
  if (c.origin == "exact") {
    s = "exact";
  } else if (c.origin == "nearest") {
    s = "nearest " + c.tuned_shape.to_string();
  } else if (c.origin == "measured") {
    s = fmt::format("measured: nearest {}, predicted {:.0f}", c.tuned_shape.to_string(),
                    c.predicted_gflops);
  } else if (c.origin == "model") {
    s = fmt::format("model: {}, predicted {:.0f}", c.tuned_shape.to_string(), c.predicted_gflops);
  } else if (c.origin == "safe path") {
    s = fmt::format("safe path, predicted {:.0f}", c.predicted_gflops);
  } else if (c.origin == "offline choice") {
    s = fmt::format("offline choice (untuned), predicted {:.0f}", c.predicted_gflops);
  } else if (c.origin == "defaults" || c.origin == "fallback") {
    s = "template defaults (untuned)";
  } else {
    s = c.origin;  // a choice kind this table does not know is shown as named, never as defaults
  }
  if (r.trials.size() > 1) s += fmt::format(", best of {} measured", r.trials.size());
  return s;
}

std::string verified_of(const SuiteRow& r, bool clblast_tuned) {
  auto one = [](const SideResult& s) -> std::string {
    if (!s.available) return "n/a";
    if (s.verified) return "ok";
    return s.status == "wrong_result" ? "WRONG" : "failed";
  };
  return one(r.gemmtune) + " / " + one(r.library) + " / " + one(r.clblast) +
         (clblast_tuned ? " / " + one(r.clblast_tuned) : "");
}

std::string ratio_of(const std::optional<double>& r) {
  return r ? fixed(*r, 2) : "n/a";
}

std::string batch_of(const SuiteRow& r) {
  return r.batch == 1 ? "1" : std::to_string(r.batch) + " " + to_string(r.batch_layout);
}

struct Table {
  std::vector<std::string> header;
  std::vector<std::vector<std::string>> rows;
  // The columns before this one are words (left-aligned), the rest numbers but the last.
  static constexpr size_t kFirstNumber = 6;
};

Table suite_table(const SuiteReport& report, bool markdown) {
  const bool cublas = !report.cublas_source.empty();
  Table t;
  t.header = {"Shape (MxNxK)",
              "Precision",
              "Batch",
              "Epilogue",
              "Kernel",
              "Configuration from",
              "gemmtune GPU GFLOPS",
              "library GPU GFLOPS",
              "CLBlast GPU GFLOPS",
              "gemmtune / CLBlast, GPU",
              "library / CLBlast, GPU",
              "gemmtune GFLOPS",
              "library GFLOPS",
              "CLBlast GFLOPS",
              "gemmtune / CLBlast",
              "library / CLBlast",
              "Host µs a call (gemmtune / library / CLBlast)"};
  if (!markdown) {
    t.header = {"shape",   "precision", "batch",   "epilogue",      "kernel",        "from",
                "gpu",     "lib gpu",   "CLB gpu", "gpu ratio",     "lib gpu ratio", "gemmtune",
                "library", "CLBlast",   "ratio",   "library ratio", "host us"};
  }
  const bool tuned = !report.clblast_tuned.empty();
  if (tuned) {
    t.header.push_back(markdown ? "CLBlast tuned GFLOPS" : "CLBlast tuned");
    t.header.push_back(markdown ? "CLBlast tuned / CLBlast" : "tuned gain");
  }
  if (cublas) {
    t.header.push_back(markdown ? "cuBLAS GFLOPS" : "cuBLAS");
    t.header.push_back(markdown ? "gemmtune / cuBLAS" : "ratio");
    t.header.push_back(markdown ? "cuBLAS device GFLOPS" : "cuBLAS device");
    t.header.push_back(markdown ? "gemmtune / cuBLAS, device" : "device ratio");
    t.header.push_back(markdown ? "library / cuBLAS, device" : "lib device ratio");
    t.header.push_back(markdown ? "cuBLAS host µs a call" : "cuBLAS host us");
  }
  t.header.push_back(!markdown ? "verified"
                     : tuned   ? "Verified (gemmtune / library / CLBlast / CLBlast tuned)"
                               : "Verified (gemmtune / library / CLBlast)");
  for (const auto& r : report.rows) {
    std::vector<std::string> cells = {r.shape.to_string(),
                                      "fp" + to_string(r.precision),
                                      batch_of(r),
                                      r.epilogue ? "bias+ReLU" : "-",
                                      r.chosen ? r.chosen->kernel : "-",
                                      source_of(r),
                                      side_gpu_gflops(r.gemmtune),
                                      side_gpu_gflops(r.library),
                                      side_gpu_gflops(r.clblast),
                                      ratio_of(r.gpu_ratio),
                                      ratio_of(r.library_gpu_ratio),
                                      side_gflops(r.gemmtune),
                                      side_gflops(r.library),
                                      side_gflops(r.clblast),
                                      ratio_of(r.ratio),
                                      ratio_of(r.library_ratio),
                                      host_costs(r)};
    if (tuned) {
      cells.push_back(side_gflops(r.clblast_tuned));
      cells.push_back(ratio_of(r.clblast_tuned_gain));
    }
    if (cublas) {
      cells.push_back(r.cublas_gflops ? rate(*r.cublas_gflops) : "n/a");
      cells.push_back(ratio_of(r.cublas_ratio));
      cells.push_back(r.cublas_device_gflops ? rate(*r.cublas_device_gflops) : "n/a");
      cells.push_back(ratio_of(r.cublas_device_ratio));
      cells.push_back(ratio_of(r.library_cublas_device_ratio));
      cells.push_back(r.cublas_host_ms ? fmt::format("{:.1f}", *r.cublas_host_ms * 1e3) : "n/a");
    }
    cells.push_back(verified_of(r, tuned));
    t.rows.push_back(std::move(cells));
  }
  return t;
}

// A side's rate in GB/s on a memory-bound row and its share of the copy's ("-" when it did not
// run).
std::string side_gbs(const MemoryBound& m, double ms) {
  if (ms <= 0) return "-";
  return fmt::format("{:.0f} ({:.0f}%)", m.gbs(ms), 100 * m.copy_ms / ms);
}

double gflops_ms(const SuiteRow& r, double gflops) {
  return gflops > 0 ? r.problem().flops() / gflops * 1e-6 : 0;
}

// The memory-bound rows: bytes moved, the copy's rate and each side's, with its share of the
// copy's rate, and the library's share of the profile's figure.
Table memory_table(const SuiteReport& report) {
  const bool cublas = !report.cublas_source.empty();
  Table t;
  t.header = {
      "Shape (MxNxK)",         "Precision", "MB moved", "copy GB/s", "gemmtune GB/s (of copy)",
      "library GB/s (of copy)"};
  if (cublas) t.header.push_back("cuBLAS GB/s (of copy)");
  t.header.push_back("profile GB/s");
  t.header.push_back("library / profile");
  for (const auto& r : report.rows) {
    if (!r.memory) continue;
    const MemoryBound& m = *r.memory;
    auto ms = [](const SideResult& s) { return s.ok() ? s.wall.median_ms : 0.0; };
    std::vector<std::string> cells = {r.shape.to_string(),         "fp" + to_string(r.precision),
                                      fixed(m.bytes * 1e-6, 1),    fixed(m.gbs(m.copy_ms), 0),
                                      side_gbs(m, ms(r.gemmtune)), side_gbs(m, ms(r.library))};
    if (cublas) cells.push_back(side_gbs(m, gflops_ms(r, r.cublas_gflops.value_or(0))));
    cells.push_back(m.profile_gbs > 0 ? fixed(m.profile_gbs, 0) : "n/a");
    cells.push_back(
        m.profile_gbs > 0 && r.library.ok()
            ? fmt::format("{:.0f}%", 100 * m.gbs(r.library.wall.median_ms) / m.profile_gbs)
            : "n/a");
    t.rows.push_back(std::move(cells));
  }
  return t;
}

constexpr const char* kMemoryNote =
    "Rows bound by memory, not arithmetic: MB moved is the least a call moves (A and B read once, "
    "C written once); GB/s from the median whole-call time; in brackets the share of the rate of "
    "a device-to-device copy of as many bytes (half read, half written), timed the same way "
    "interleaved with the row's calls, launch included. The profile's figure is the device's "
    "stated bandwidth.";

std::string md_escape(std::string s) {
  s = first_line(s);
  std::string out;
  for (char c : s) {
    if (c == '|')
      out += "\\|";
    else
      out += c;
  }
  return out;
}

// Each side of a row with its name.
std::vector<std::pair<const char*, const SideResult*>> sides_of(const SuiteRow& r) {
  return {{"gemmtune", &r.gemmtune},
          {"library", &r.library},
          {"CLBlast", &r.clblast},
          {"CLBlast tuned", &r.clblast_tuned}};
}

std::vector<std::string> failures_of(const SuiteReport& report) {
  std::vector<std::string> out;
  for (const auto& r : report.rows) {
    for (const auto& [name, s] : sides_of(r)) {
      if (s->available && !s->ok()) {
        out.push_back(r.label() + " " + name + " " + s->status + ": " + s->message);
      }
    }
  }
  return out;
}

// The sides that did not run and why (a precision the device or CLBlast lacks). A CLBlast
// column left out of the whole report is said once in the header instead.
std::vector<std::string> not_run_of(const SuiteReport& report) {
  std::vector<std::string> out;
  for (const auto& r : report.rows) {
    for (const auto& [name, s] : sides_of(r)) {
      if (s->available || (s == &r.clblast && !report.clblast)) continue;
      if (s == &r.clblast_tuned && report.clblast_tuned.empty()) continue;
      out.push_back(r.label() + " " + name + " n/a: " + s->message);
    }
  }
  return out;
}

}  // namespace

std::string suite_markdown(const SuiteReport& report) {
  const auto& d = report.device;
  std::string md = "# gemmtune bench-suite: " + d.name + "\n\n";
  md += fmt::format("- Device: {} ({}, {})\n", d.name, d.vendor, d.type);
  md += fmt::format("- Platform: {} ({})\n", d.platform_name, d.platform_version);
  md += fmt::format("- Driver: {}\n", d.driver_version);
  md += fmt::format("- Date: {}\n", report.date);
  md += fmt::format("- Command: `{}`\n", report.command);
  md += fmt::format("- gemmtune {}; databases: {}\n", report.gemmtune_version,
                    report.databases.empty() ? std::string("none") : join(report.databases));
  for (const auto& s : report.stale_entries) {
    md +=
        "- **Stale entries, passed over** (this build's templates no longer accept them, so the "
        "run measured less than the database holds): " +
        s + "\n";
  }
  md += fmt::format("- CLBlast: {}\n",
                    report.clblast
                        ? "stock Gemm (GemmStridedBatched for strided batches, GemmBatched with "
                          "the same per-matrix offsets for offsets batches), same buffers and "
                          "queue; fp16acc32 rows n/a (CLBlast has no FP16-storage/FP32-accumulate "
                          "GEMM, and its half GEMM is a different computation)"
                        : "n/a (" + report.clblast_note + ")");
  if (!report.clblast_tuned.empty()) {
    md += "- CLBlast tuned: the same routine with " + report.clblast_tuned +
          ", installed through clblast::OverrideParameters before each of its calls; the "
          "CLBlast column installs CLBlast's own parameters (read before any override) before "
          "each of its calls, so both are timed interleaved in this process\n";
  }
  if (!report.cublas_source.empty()) {
    md += "- cuBLAS: " + report.cublas_source +
          "; cublasSgemm_v2 called directly. Whole call: host clock from before the call to the "
          "return of the device synchronization, compared with gemmtune's whole call. Device: "
          "CUDA events around N calls queued back to back behind a busy wait, per call (the same "
          "N rule), compared with gemmtune's GPU time\n";
  }
  md += fmt::format(
      "- Timing: row-major NN, alpha 1, beta 0, in each row's precision; median of {} "
      "interleaved calls of each side after {} warm-up call(s), each timed call right after an "
      "untimed one of its own side (what one side leaves in the device's cache never counts for "
      "another). GFLOPS = 2MNK x batch / "
      "whole-call time (first enqueue to the return of clFinish, host steady clock, every kernel "
      "of the call, no profiling event requested; a batch is one call). GPU: the figure of "
      "record, every side on one clock: N calls queued behind a busy-wait kernel, from its end to "
      "the last call's end by the device's events, per call (N at least 20 on a GPU and enough "
      "for 1 ms; the host clock over the queued calls where the events fail the timer check). "
      "Host µs a call: N calls queued on an idle GPU, host clock per call (what a stream of small "
      "calls costs the host).\n",
      report.reps, report.warmup);
  md +=
      "- Batch: GEMMs per call and where their matrices lie: strided (one buffer per operand, a "
      "fixed stride apart) or offsets (one buffer per operand and a per-matrix offset).\n";
  md +=
      "- Configuration from: the tuned database entry of the row's precision, batch and batch "
      "layout (exact shape, else the selection model's choice among that family's entries, or "
      "the safe path where a baseline is predicted to win), else the template defaults "
      "(untuned).\n";
  md += fmt::format(
      "- gemmtune: that configuration through the internal call path (GemmCall). library: the "
      "same row through libgemmtune's public calls (gemmtune::Gemm, GemmEpilogue, "
      "GemmStridedBatched, GemmBatched) with its compiled-in templates and, as its user "
      "database, {}: what an application gets, argument checks and the library's own choice "
      "included (see Configurations).\n",
      report.library_database.empty() ? std::string("none") : "`" + report.library_database + "`");
  md +=
      "- Epilogue rows (FP32 single GEMMs): gemmtune's kernel with bias+ReLU fused, against "
      "CLBlast's Gemm followed by a separate bias+ReLU kernel (timed as one call).\n\n";

  const Table t = suite_table(report, true);
  auto line = [](const std::vector<std::string>& cells) {
    std::string s = "|";
    for (const auto& c : cells) s += " " + md_escape(c) + " |";
    return s + "\n";
  };
  md += line(t.header);
  md += "|";
  for (size_t i = 0; i < t.header.size(); ++i) {
    // Numbers right-aligned.
    md += i < Table::kFirstNumber || i + 1 == t.header.size() ? " --- |" : " ---: |";
  }
  md += "\n";
  for (const auto& r : t.rows) md += line(r);

  const Table mt = memory_table(report);
  if (!mt.rows.empty()) {
    md += std::string("\n## Memory-bound rows\n\n") + kMemoryNote + "\n\n";
    md += line(mt.header);
    md += "|";
    for (size_t i = 0; i < mt.header.size(); ++i) md += i < 2 ? " --- |" : " ---: |";
    md += "\n";
    for (const auto& r : mt.rows) md += line(r);
    for (const auto& r : report.rows) {
      if (r.memory) md += "- " + r.label() + ": " + r.memory->rule + "\n";
    }
  }

  md += "\n## Configurations\n\n";
  for (const auto& r : report.rows) {
    const std::string label = r.label();
    if (!r.chosen) {
      md += "- " + label + (r.gemmtune.available ? ": none ran\n" : ": n/a\n");
    } else {
      const Candidate& c = *r.chosen;
      std::string from =
          c.origin == "defaults"    ? std::string("template defaults")
          : c.origin == "safe path" ? std::string("safe path: template defaults")
          : c.origin == "offline choice"
              ? "offline choice of " + c.database
              : fmt::format("{} entry {} in {}, recorded {:.1f} GFLOPS", c.origin,
                            c.tuned_shape.to_string(), c.database, c.recorded_gflops);
      md += fmt::format("- {}: {} `{}` ({})\n", label, c.kernel, to_string(c.parameters), from);
      if (!c.reason.empty()) md += "  - why: " + md_escape(c.reason) + "\n";
    }
    for (const auto& trial : r.trials) {
      md += fmt::format("  - candidate {} from {}: {}\n", trial.candidate.kernel,
                        trial.candidate.tuned_shape.to_string(),
                        trial.status == "ok" ? fmt::format("{:.1f} GFLOPS", trial.gflops)
                                             : trial.status + ": " + md_escape(trial.message));
    }
    if (const auto& l = r.library_choice) {
      md += fmt::format("  - library: {} `{}` ({} {}{})\n", l->kernel, l->parameters, l->source,
                        md_escape(l->database), l->entry.empty() ? "" : ", entry " + l->entry);
    }
  }
  md += "\n## Summary\n\n";
  for (const auto& l : suite_summary_lines(report)) md += "- " + l + "\n";
  const auto failures = failures_of(report);
  if (!failures.empty()) {
    md += "\n## Failures\n\n";
    for (const auto& f : failures) md += "- " + md_escape(f) + "\n";
  }
  const auto not_run = not_run_of(report);
  if (!not_run.empty()) {
    md += "\n## Not run (n/a)\n\n";
    for (const auto& f : not_run) md += "- " + md_escape(f) + "\n";
  }
  return md;
}

namespace {

// `t` as aligned text: the columns from `first_number` on right-aligned but the last.
std::string text_table(const Table& t, size_t first_number) {
  std::vector<size_t> width(t.header.size(), 0);
  for (size_t i = 0; i < t.header.size(); ++i) width[i] = t.header[i].size();
  for (const auto& r : t.rows) {
    for (size_t i = 0; i < r.size(); ++i) width[i] = std::max(width[i], r[i].size());
  }
  auto line = [&](const std::vector<std::string>& cells) {
    std::string s;
    for (size_t i = 0; i < cells.size(); ++i) {
      s += i >= first_number && i + 1 < cells.size() ? fmt::format("{:>{}}", cells[i], width[i])
                                                     : fmt::format("{:<{}}", cells[i], width[i]);
      if (i + 1 < cells.size()) s += "  ";
    }
    while (!s.empty() && s.back() == ' ') s.pop_back();
    return s + "\n";
  };
  std::string out = line(t.header);
  for (const auto& r : t.rows) out += line(r);
  return out;
}

}  // namespace

std::string suite_text(const SuiteReport& report) {
  const auto& d = report.device;
  std::string out = fmt::format("{} ({}, driver {})\n", d.name, d.platform_name, d.driver_version);
  out += fmt::format(
      "GFLOPS from the median whole-call time of {} interleaved calls, each after one of its "
      "own; ratio = "
      "gemmtune / other\n\n",
      report.reps);
  out += text_table(suite_table(report, false), Table::kFirstNumber);
  const Table mt = memory_table(report);
  if (!mt.rows.empty()) out += std::string("\n") + kMemoryNote + "\n" + text_table(mt, 2);
  out += "\n";
  for (const auto& l : suite_summary_lines(report)) out += l + "\n";
  std::vector<std::string> notes = failures_of(report);
  for (const auto& n : not_run_of(report)) notes.push_back(n);
  if (!notes.empty()) out += "\n";
  for (const auto& n : notes) out += first_line(n) + "\n";
  return out;
}

}  // namespace gemmtune
