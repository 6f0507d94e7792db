// SPDX-License-Identifier: Apache-2.0
#include "src/db/export.hpp"

#include <algorithm>
#include <cctype>
#include <filesystem>
#include <memory>
#include <set>
#include <sstream>

#include <fmt/format.h>

#include "src/core/error.hpp"
#include "src/core/text.hpp"
#include "src/core/version.hpp"
#include "src/device/device.hpp"
#include "src/kernel/kernel_spec.hpp"

namespace gemmtune {

namespace {

struct KernelMapping {
  const char* gemmtune_kernel;
  const char* clblast_kernel;
  const char* family;
  // Values CLBlast needs that the gemmtune kernel fixes implicitly.
  std::map<std::string, int64_t> fixed;
};

// gemmtune's xgemm is CLBlast's Xgemm restricted to GEMMK=0, KREG=1; the clblast-* templates
// describe CLBlast's own kernels and carry every parameter already.
const std::vector<KernelMapping>& mappings() {
  static const std::vector<KernelMapping> kMappings = {
      {"xgemm", "Xgemm", "xgemm", {{"GEMMK", 0}, {"KREG", 1}}},
      {"clblast-xgemm", "Xgemm", "xgemm", {}},
      {"xgemm_direct", "XgemmDirect", "xgemm_direct", {}},
      {"clblast-xgemm-direct", "XgemmDirect", "xgemm_direct", {}},
  };
  return kMappings;
}

std::string upper(std::string s) {
  std::transform(s.begin(), s.end(), s.begin(), [](unsigned char c) { return std::toupper(c); });
  return s;
}

// A C identifier fragment: letters, digits and underscores only.
std::string ident(const std::string& s) {
  std::string out;
  for (char c : s) out += std::isalnum(static_cast<unsigned char>(c)) ? c : '_';
  return out;
}

// What tells apart entries of one kernel and precision in a name, each part of the key: the
// layout, the batch (with its layout when there is more than one matrix) and the shape, the
// storage order where it is not row-major and the epilogue where there is one.
std::string problem_ident(const EntryKey& k) {
  std::string out = k.layout;
  if (k.order != Order::kRowMajor) out += "_col";
  if (k.batch > 1) out += "_b" + std::to_string(k.batch) + "_" + to_string(k.batch_layout);
  out += "_" + k.shape.to_string();
  if (const std::string e = to_string(k.epilogue); !e.empty()) out += "_" + e;
  return lower(ident(out));
}

// A C identifier of the entry: the kernel, precision, order, layout, batch and shape, then the
// batch layout of a batch and the epilogue where there is one.
std::string entry_ident(const EntryKey& k) {
  std::string out = k.kernel + "_fp" + to_string(k.precision) + "_" +
                    (k.order == Order::kRowMajor ? "row" : "col") + "_" + k.layout + "_b" +
                    std::to_string(k.batch) + "_" + k.shape.to_string();
  if (k.batch > 1) out += "_" + to_string(k.batch_layout);
  if (const std::string e = to_string(k.epilogue); !e.empty()) out += "_" + e;
  return lower(ident(out));
}

// C/C++ string literal contents: quotes, backslashes and control characters escaped.
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

// A comment line must not close the comment early.
std::string comment_safe(std::string s) {
  for (size_t p; (p = s.find("*/")) != std::string::npos;) s.replace(p, 2, "* /");
  for (auto& c : s) {
    if (c == '\n' || c == '\r') c = ' ';
  }
  return s;
}

std::string csv_field(const std::string& s) {
  if (s.find_first_of(",\"\n\r") == std::string::npos) return s;
  std::string out = "\"";
  for (char c : s) out += c == '"' ? std::string("\"\"") : std::string(1, c);
  return out + "\"";
}

// CLBlast's short vendor names, as its device database uses them.
std::string clblast_vendor(const std::string& vendor) {
  const std::string v = lower(vendor);
  if (v.find("nvidia") != std::string::npos) return "NVIDIA";
  if (v.find("advanced micro devices") != std::string::npos || v.find("amd") != std::string::npos) {
    return "AMD";
  }
  if (v.find("intel") != std::string::npos) return "Intel";
  if (v.find("arm") != std::string::npos) return "ARM";
  if (v.find("qualcomm") != std::string::npos) return "QUALCOMM";
  if (v.find("apple") != std::string::npos) return "Apple";
  return vendor;
}

// CLBlast's architecture string: "SM9.0" for NVIDIA, the gfx name for AMD, else empty.
std::string clblast_architecture(const DatabaseDevice& d) {
  const std::string p = lower(d.profile);
  if (p.rfind("sm_", 0) == 0 && p.size() >= 5) {
    const std::string digits = p.substr(3);
    return "SM" + digits.substr(0, digits.size() - 1) + "." + digits.substr(digits.size() - 1);
  }
  if (p.rfind("gfx", 0) == 0) return d.profile;
  if (lower(d.name).rfind("gfx", 0) == 0) return d.name.substr(0, d.name.find(':'));
  return "";
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

ExportResult export_clblast_json(const Database& db) {
  ExportResult r;
  std::set<std::string> names;
  for (const auto& e : db.entries()) {
    std::string why;
    auto p = to_clblast(e, &why);
    if (!p) {
      r.notes.push_back(e.key.to_string() + ": skipped (" + why + ")");
      continue;
    }
    if (e.status != Status::kOk) {
      r.notes.push_back(e.key.to_string() + ": skipped (status " + to_string(e.status) + ")");
      continue;
    }
    if (!p->left_out.empty()) {
      r.notes.push_back(e.key.to_string() + ": left out " + join(p->left_out, ", ") +
                        " (no CLBlast equivalent)");
    }
    // CLBlast's tuner names its file by kernel family and precision; the rest of the name keeps
    // one file per entry: the problem, and the gemmtune kernel where two share a family
    // (xgemm and clblast-xgemm).
    const std::string kernel = e.key.kernel == p->family ? "" : lower(ident(e.key.kernel)) + "_";
    const std::string name = fmt::format("clblast_{}_1_{}_{}{}.json", p->family, p->precision,
                                         kernel, problem_ident(e.key));
    r.files.push_back({name, clblast_tuner_json(db.device, e, *p).dump(2) + "\n"});
    // Every key part is in the name, so two entries never share a file; were they to, the second
    // would replace the first without a word.
    if (!names.insert(name).second) {
      throw Error(ErrorCode::kInternal, "two entries would be exported to one file " + name);
    }
  }
  return r;
}

ExportResult export_clblast_override(const Database& db, const std::string& source) {
  ExportResult r;
  std::ostringstream out;
  out << header_comment_lines(db, source, "// ");
  out << "// CLBlast keeps one parameter set per device, kernel and precision, whatever the "
         "shape:\n"
         "// call the function of the shape that matters most before the first clblast::Gemm of\n"
         "// that precision. CLBlast runs XgemmDirect below its GemmRoutine parameter\n"
         "// XGEMM_MIN_INDIRECT_SIZE and Xgemm above it.\n"
         "#pragma once\n\n#include <clblast.h>\n";
  size_t written = 0;
  for (const auto& e : db.entries()) {
    std::string why;
    auto p = to_clblast(e, &why);
    if (!p || e.status != Status::kOk) {
      r.notes.push_back(e.key.to_string() + ": skipped (" +
                        (p ? "status " + to_string(e.status) : why) + ")");
      continue;
    }
    out << "\n"
        << fmt::format("// {}: {:.1f} GFLOPS, {:.4f} ms", e.key.to_string(), e.gflops,
                       entry_time_ms(e));
    out << "\n";
    if (!p->left_out.empty()) {
      out << "// Left out (no CLBlast equivalent): " << join(p->left_out, ", ") << "\n";
      r.notes.push_back(e.key.to_string() + ": left out " + join(p->left_out, ", ") +
                        " (no CLBlast equivalent)");
    }
    if (!p->added.empty()) {
      out << "// Added as CLBlast requires: " << join(p->added, ", ") << "\n";
    }
    std::vector<std::string> pairs;
    for (const auto& [name, value] : p->parameters) {
      pairs.push_back(fmt::format("{{\"{}\", {}}}", name, value));
    }
    out << "inline clblast::StatusCode gemmtune_override_" << entry_ident(e.key)
        << "(cl_device_id device) {\n";
    out << "  return clblast::OverrideParameters(device, \"" << p->kernel
        << "\", clblast::Precision::" << p->precision_enum << ",\n";
    // Wrapped at four pairs a line to stay readable.
    out << "                                     {";
    for (size_t i = 0; i < pairs.size(); ++i) {
      if (i) out << (i % 4 == 0 ? ",\n                                      " : ", ");
      out << pairs[i];
    }
    out << "});\n}\n";
    ++written;
  }
  // Nothing to override: no file, so that the caller says how to get an entry CLBlast can use.
  if (written > 0) r.files.push_back({"clblast_override.hpp", out.str()});
  return r;
}

ExportResult export_c_header(const Database& db, const std::string& source,
                             const CompilerOptions& compiler_options) {
  ExportResult r;
  const std::string guard = "GEMMTUNE_TUNED_" + upper(ident(db.device.id)) + "_H_";
  std::ostringstream out;
  out << "/*\n" << header_comment_lines(db, source, " * ");
  out << " * Self-contained: no include and no library needed; C89 and C++ compatible.\n */\n";
  out << "#ifndef " << guard << "\n#define " << guard << "\n\n";
  out << "#ifndef GEMMTUNE_TUNED_TYPES_\n#define GEMMTUNE_TUNED_TYPES_\n";
  out << "typedef struct gemmtune_param {\n  const char* name;\n  long long value;\n} "
         "gemmtune_param;\n\n";
  out << "typedef struct gemmtune_tuned {\n"
         "  const char* kernel;    /* gemmtune kernel template */\n"
         "  const char* precision; /* \"32\", \"64\", \"16\", \"16acc32\" */\n"
         "  const char* order;     /* \"row\" or \"col\" */\n"
         "  const char* layout;    /* op(A) op(B): \"NN\", \"NT\", \"TN\", \"TT\" */\n"
         "  long long batch, m, n, k;\n"
         "  const char* batch_layout; /* \"strided\" or \"offsets\" (batch > 1) */\n"
         "  const char* epilogue;     /* \"\" or e.g. \"bias,relu\" */\n"
         "  double gflops;\n"
         "  double median_ms;\n"
         "  const char* defines;   /* the parameters as OpenCL build options, then the compiler\n"
         "                            options the tuning used (e.g. a register cap) */\n"
         "  int num_params;\n"
         "  const gemmtune_param* params;\n"
         "} gemmtune_tuned;\n#endif\n\n";
  out << "#define GEMMTUNE_DEVICE_NAME \"" << c_escape(db.device.name) << "\"\n";
  std::vector<const DatabaseEntry*> ok;
  for (const auto& e : db.entries()) {
    if (e.status == Status::kOk && !e.parameters.empty()) {
      ok.push_back(&e);
    } else {
      r.notes.push_back(e.key.to_string() + ": skipped (status " + to_string(e.status) + ")");
    }
  }
  out << "#define GEMMTUNE_NUM_TUNED " << ok.size() << "\n\n";
  for (size_t i = 0; i < ok.size(); ++i) {
    out << "/* " << comment_safe(ok[i]->key.to_string()) << " */\n";
    out << "static const gemmtune_param gemmtune_params_" << i << "[] = {";
    size_t j = 0;
    for (const auto& [name, value] : ok[i]->parameters) {
      out << (j++ % 4 == 0 ? "\n    " : " ") << "{\"" << c_escape(name) << "\", " << value
          << "LL},";
    }
    out << "\n};\n";
  }
  out << "\nstatic const gemmtune_tuned gemmtune_tuned_entries[] = {\n";
  for (size_t i = 0; i < ok.size(); ++i) {
    const auto& e = *ok[i];
    std::string defines;
    for (const auto& [name, value] : e.parameters) {
      defines += (defines.empty() ? "" : " ") + fmt::format("-D{}={}", name, value);
    }
    if (const std::string more = compiler_options ? compiler_options(e) : ""; !more.empty()) {
      defines += " " + more;
    }
    out << fmt::format(
        "    {{\"{}\", \"{}\", \"{}\", \"{}\", {}LL, {}LL, {}LL, {}LL, \"{}\", \"{}\", {:.17g},\n"
        "     {:.17g}, \"{}\", {}, gemmtune_params_{}}},\n",
        c_escape(e.key.kernel), to_string(e.key.precision),
        e.key.order == Order::kRowMajor ? "row" : "col", e.key.layout, e.key.batch, e.key.shape.m,
        e.key.shape.n, e.key.shape.k, to_string(e.key.batch_layout),
        c_escape(to_string(e.key.epilogue)), e.gflops, e.time.median_ms, c_escape(defines),
        e.parameters.size(), i);
  }
  if (ok.empty()) out << "    {0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0},\n";
  out << "};\n\n";
  // A lookup helper with no dependency on <string.h>.
  out << "static int gemmtune_streq_(const char* a, const char* b) {\n"
         "  while (*a && *a == *b) { ++a; ++b; }\n"
         "  return *a == *b;\n}\n\n"
         "/* The entry of exactly this problem as a plain GEMM (no epilogue; batches strided), or\n"
         "   0. Entries of other batch layouts and epilogues are in gemmtune_tuned_entries. */\n"
         "static const gemmtune_tuned* gemmtune_find(const char* kernel, const char* precision,\n"
         "                                           const char* order, const char* layout,\n"
         "                                           long long batch, long long m, long long n,\n"
         "                                           long long k) {\n"
         "  int i;\n"
         "  for (i = 0; i < GEMMTUNE_NUM_TUNED; ++i) {\n"
         "    const gemmtune_tuned* t = &gemmtune_tuned_entries[i];\n"
         "    if (gemmtune_streq_(t->kernel, kernel) && gemmtune_streq_(t->precision, precision) "
         "&&\n"
         "        gemmtune_streq_(t->order, order) && gemmtune_streq_(t->layout, layout) &&\n"
         "        t->batch == batch && t->m == m && t->n == n && t->k == k &&\n"
         "        gemmtune_streq_(t->batch_layout, \"strided\") && !*t->epilogue) {\n"
         "      return t;\n"
         "    }\n"
         "  }\n"
         "  return 0;\n}\n\n";
  out << "#endif /* " << guard << " */\n";
  r.files.push_back({"gemmtune_tuned_" + lower(ident(db.device.id)) + ".h", out.str()});
  return r;
}

ExportResult export_csv(const Database& db, const CompilerOptions& compiler_options) {
  ExportResult r;
  std::set<std::string> names;
  for (const auto& e : db.entries()) {
    for (const auto& [n, v] : e.parameters) names.insert(n);
  }
  std::ostringstream out;
  out << "device,kernel,precision,order,layout,batch,batch_layout,epilogue,m,n,k,status,gflops,"
         "median_ms,min_ms,cv,runs,"
         "max_error,strategy,evaluations,seed,space,date,compiler_options";
  for (const auto& n : names) out << "," << csv_field(n);
  out << "\n";
  for (const auto& e : db.entries()) {
    const auto& k = e.key;
    out << csv_field(db.device.name) << "," << csv_field(k.kernel) << "," << to_string(k.precision)
        << "," << (k.order == Order::kRowMajor ? "row" : "col") << "," << k.layout << "," << k.batch
        << "," << to_string(k.batch_layout) << "," << csv_field(to_string(k.epilogue)) << ","
        << k.shape.m << "," << k.shape.n << "," << k.shape.k << "," << to_string(e.status) << ","
        << fmt::format("{:.17g},{:.17g},{:.17g},{:.17g}", e.gflops, e.time.median_ms, e.time.min_ms,
                       e.time.cv)
        << "," << e.time.runs << "," << fmt::format("{:.17g}", e.max_error) << ","
        << csv_field(e.found.strategy) << "," << e.found.evaluations << "," << e.found.seed << ","
        << csv_field(e.found.space) << "," << csv_field(e.found.date) << ","
        << csv_field(compiler_options ? compiler_options(e) : "");
    for (const auto& n : names) {
      auto it = e.parameters.find(n);
      out << ",";
      if (it != e.parameters.end()) out << it->second;
    }
    out << "\n";
  }
  r.files.push_back({"gemmtune_" + lower(ident(db.device.id)) + ".csv", out.str()});
  return r;
}

// The database as the argument list of one GEMMTUNE_EMBED_DATABASE(name, device, profile,
// entries, json) invocation, the JSON as raw string literals.
ExportResult export_embed(const Database& db, const std::string& source) {
  const std::string json = db.to_json().dump(1);
  // The delimiter must not close the literal early; a database's own strings could hold it.
  std::string delimiter = "gemmtune_db";
  for (int i = 1; json.find(")" + delimiter + "\"") != std::string::npos; ++i) {
    delimiter = "gemmtune_db" + std::to_string(i);
  }
  std::ostringstream out;
  out << header_comment_lines(db, source, "// ");
  out << "// Entries: " << db.entries().size()
      << ". Compiled into libgemmtune by configuring its build with\n"
         "//   cmake -DGEMMTUNE_EMBED_DATABASES=<this file>[;<another>...]\n"
         "// (the library then prefers it to its system and compiled-in databases; see README).\n"
         "// Another program defines GEMMTUNE_EMBED_DATABASE(name, device, profile, entries, "
         "json)\n"
         "// before including it: the arguments are string literals but `entries`, a count.\n"
         "#ifndef GEMMTUNE_EMBED_DATABASE\n"
         "#error \"define GEMMTUNE_EMBED_DATABASE(name, device, profile, entries, json) before "
         "including a database exported by gemmtune export --format embed\"\n"
         "#endif\n";
  out << fmt::format("GEMMTUNE_EMBED_DATABASE(\"{}\", \"{}\", \"{}\", {},\n", c_escape(source),
                     c_escape(db.device.name), c_escape(db.device.profile), db.entries().size());
  // Literals of a few kilobytes each: compilers limit the length of one literal, not of a
  // concatenation.
  constexpr size_t kPiece = 8000;
  for (size_t at = 0; at < json.size(); at += kPiece) {
    out << "R\"" << delimiter << "(" << json.substr(at, kPiece) << ")" << delimiter << "\"\n";
  }
  out << ")\n";
  ExportResult r;
  r.files.push_back({"gemmtune_db_" + lower(ident(db.device.id)) + ".hpp", out.str()});
  return r;
}

}  // namespace

ExportFormat parse_export_format(const std::string& name) {
  if (name == "clblast-json") return ExportFormat::kClblastJson;
  if (name == "clblast-override") return ExportFormat::kClblastOverride;
  if (name == "c-header") return ExportFormat::kCHeader;
  if (name == "csv") return ExportFormat::kCsv;
  if (name == "embed") return ExportFormat::kEmbed;
  if (name == "t4") return ExportFormat::kT4;
  throw invalid_argument("unknown export format '" + name +
                         "' (expected clblast-json, clblast-override, c-header, csv, embed or t4)");
}

std::string to_string(ExportFormat f) {
  switch (f) {
    case ExportFormat::kClblastJson:
      return "clblast-json";
    case ExportFormat::kClblastOverride:
      return "clblast-override";
    case ExportFormat::kCHeader:
      return "c-header";
    case ExportFormat::kCsv:
      return "csv";
    case ExportFormat::kEmbed:
      return "embed";
    case ExportFormat::kT4:
      return "t4";
  }
  return "?";
}

const std::vector<std::string>& clblast_parameter_names(const std::string& clblast_kernel) {
  // The names CLBlast 1.5's OverrideParameters requires for each kernel.
  static const std::vector<std::string> kXgemm = {
      "GEMMK", "KREG", "KWG", "KWI", "MDIMA", "MDIMC", "MWG", "NDIMB",
      "NDIMC", "NWG",  "SA",  "SB",  "STRM",  "STRN",  "VWM", "VWN"};
  static const std::vector<std::string> kDirect = {"KWID", "MDIMAD", "MDIMCD", "NDIMBD", "NDIMCD",
                                                   "PADA", "PADB",   "VWMD",   "VWND",   "WGD"};
  static const std::vector<std::string> kNone;
  if (clblast_kernel == "Xgemm") return kXgemm;
  if (clblast_kernel == "XgemmDirect") return kDirect;
  return kNone;
}

std::string clblast_export_hint() {
  std::vector<std::string> kernels;
  for (const auto& m : mappings()) kernels.push_back(m.gemmtune_kernel);
  return "only entries of " + join(kernels, ", ") +
         " have CLBlast equivalents: tune one with gemmtune search --kernel clblast-xgemm (or "
         "--kernel xgemm); the default search tunes xgemm_fast, which CLBlast does not have";
}

std::optional<ClblastParameters> to_clblast(const DatabaseEntry& entry, std::string* why) {
  auto fail = [&](const std::string& reason) -> std::optional<ClblastParameters> {
    if (why) *why = reason;
    return std::nullopt;
  };
  const KernelMapping* mapping = nullptr;
  for (const auto& m : mappings()) {
    if (entry.key.kernel == m.gemmtune_kernel) mapping = &m;
  }
  if (!mapping) return fail("kernel " + entry.key.kernel + " has no CLBlast equivalent");
  ClblastParameters p;
  p.kernel = mapping->clblast_kernel;
  p.family = mapping->family;
  switch (entry.key.precision) {
    case Precision::kFP32:
      p.precision = "32", p.precision_enum = "kSingle";
      break;
    case Precision::kFP64:
      p.precision = "64", p.precision_enum = "kDouble";
      break;
    case Precision::kFP16:
      p.precision = "16", p.precision_enum = "kHalf";
      break;
    case Precision::kFP16Acc32:
      return fail("CLBlast has no fp16 GEMM with fp32 accumulation");
  }
  const auto& names = clblast_parameter_names(p.kernel);
  for (const auto& [name, value] : entry.parameters) {
    if (std::find(names.begin(), names.end(), name) == names.end()) {
      p.left_out.push_back(name);
      continue;
    }
    if (value < 0) return fail("parameter " + name + " is negative");
    p.parameters[name] = value;
  }
  for (const auto& [name, value] : mapping->fixed) {
    auto it = p.parameters.find(name);
    if (it != p.parameters.end() && it->second != value) {
      return fail(name + "=" + std::to_string(it->second) + " differs from the CLBlast kernel's " +
                  std::to_string(value));
    }
    if (it == p.parameters.end()) {
      p.parameters[name] = value;
      p.added.push_back(name + "=" + std::to_string(value));
    }
  }
  std::vector<std::string> missing;
  for (const auto& n : names) {
    if (!p.parameters.count(n)) missing.push_back(n);
  }
  if (!missing.empty()) return fail("CLBlast needs " + join(missing, ", ") + ", which are absent");
  return p;
}

nlohmann::ordered_json clblast_tuner_json(const DatabaseDevice& device, const DatabaseEntry& entry,
                                          const ClblastParameters& params) {
  // The parameters with PRECISION, sorted by name as CLBlast's tuner prints them.
  std::map<std::string, int64_t> with_precision = params.parameters;
  with_precision["PRECISION"] = std::stoll(params.precision);
  std::string best;
  nlohmann::ordered_json pj = nlohmann::ordered_json::object();
  for (const auto& [name, value] : with_precision) {
    best += (best.empty() ? "" : " ") + name + "=" + std::to_string(value);
    pj[name] = value;
  }
  std::string type = upper(device.type.empty() ? std::string("gpu") : device.type);
  const std::string arch = clblast_architecture(device);
  const double time_ms = entry_time_ms(entry);
  nlohmann::ordered_json j;
  j["kernel_family"] = params.family + "_1";
  j["precision"] = params.precision;
  j["best_kernel"] = params.kernel;
  j["best_time"] = fmt::format("{:.2f}", time_ms);
  j["best_parameters"] = best;
  j["arg_m"] = std::to_string(entry.key.shape.m);
  j["arg_n"] = std::to_string(entry.key.shape.n);
  j["arg_k"] = std::to_string(entry.key.shape.k);
  j["arg_alpha"] = fmt::format("{:.2f}", entry.alpha);
  j["arg_beta"] = fmt::format("{:.2f}", entry.beta);
  j["clblast_device_type"] = type;
  j["clblast_device_vendor"] = clblast_vendor(device.vendor);
  j["clblast_device_architecture"] = arch;
  j["clblast_device_name"] = device.name;
  j["device"] = device.name;
  // The database keeps the device's vendor, not the platform's; they agree on GPU drivers.
  j["platform_vendor"] = device.vendor;
  j["platform_version"] = device.platform_version;
  j["device_vendor"] = device.vendor;
  j["device_type"] = type;
  j["device_core_clock"] = std::to_string(device.max_clock_mhz);
  j["device_compute_units"] = std::to_string(device.compute_units);
  j["device_extra_info"] = arch;
  nlohmann::ordered_json result;
  result["kernel"] = params.kernel;
  result["time"] = time_ms;
  result["parameters"] = pj;
  j["results"] = nlohmann::ordered_json::array({result});
  return j;
}

CompilerOptions register_cap_options(const std::string& templates_dir,
                                     const DeviceProfile* profile) {
  if (!profile || profile->register_cap_method == RegisterCapMethod::kNone) return {};
  // The profile's method as the evaluators apply it: the option with the value, or the define
  // that makes the template declare the cap as an attribute.
  DeviceLimits limits = device_limits(DeviceInfo{}, profile);
  // Declarations are read once per kernel; a kernel without one exports no options.
  auto specs = std::make_shared<std::map<std::string, std::optional<KernelSpec>>>();
  return [templates_dir, limits, specs](const DatabaseEntry& e) -> std::string {
    auto it = specs->find(e.key.kernel);
    if (it == specs->end()) {
      const auto path = std::filesystem::path(templates_dir) / (e.key.kernel + ".json");
      std::error_code ec;
      std::optional<KernelSpec> spec;
      if (std::filesystem::exists(path, ec)) spec = KernelSpec::load(path.string());
      it = specs->emplace(e.key.kernel, std::move(spec)).first;
    }
    return it->second ? it->second->register_cap_option(e.parameters, limits) : "";
  };
}

ExportResult export_database(const Database& db, ExportFormat format, const std::string& source,
                             const CompilerOptions& compiler_options) {
  switch (format) {
    case ExportFormat::kClblastJson:
      return export_clblast_json(db);
    case ExportFormat::kClblastOverride:
      return export_clblast_override(db, source);
    case ExportFormat::kCHeader:
      return export_c_header(db, source, compiler_options);
    case ExportFormat::kCsv:
      return export_csv(db, compiler_options);
    case ExportFormat::kEmbed:
      return export_embed(db, source);
    case ExportFormat::kT4:
      return export_t4(t4_records(db));
  }
  throw Error(ErrorCode::kInternal, "unhandled export format");
}

}  // namespace gemmtune
