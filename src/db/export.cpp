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
#include "src/db/export_internal.hpp"
#include "src/device/device.hpp"
#include "src/kernel/kernel_spec.hpp"

namespace gemmtune {

using namespace export_detail;

namespace {

std::string csv_field(const std::string& s) {
  if (s.find_first_of(",\"\n\r") == std::string::npos) return s;
  std::string out = "\"";
  for (char c : s) out += c == '"' ? std::string("\"\"") : std::string(1, c);
  return out + "\"";
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
