// SPDX-License-Identifier: Apache-2.0
// Exports of a tuned database for use outside gemmtune: the JSON that CLBlast's own tuner writes
// (so CLBlast's database scripts take it unchanged), a C++ snippet that installs the parameters in
// CLBlast at run time, a dependency-free C header, CSV, and a C++ header holding the database
// itself for libgemmtune's build to compile in (GEMMTUNE_EMBED_DATABASES), and T4 results (the
// auto-tuning tools' exchange format).
#pragma once

#include <functional>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "src/db/database.hpp"
#include "src/db/recording.hpp"
#include "src/device/device_profile.hpp"

namespace gemmtune {

enum class ExportFormat { kClblastJson, kClblastOverride, kCHeader, kCsv, kEmbed, kT4 };

ExportFormat parse_export_format(const std::string& name);  // throws Error listing the formats
std::string to_string(ExportFormat f);

// A tuned entry as CLBlast understands it.
struct ClblastParameters {
  std::string kernel;          // CLBlast's kernel name: "Xgemm" or "XgemmDirect"
  std::string family;          // the tuner's kernel family: "xgemm" or "xgemm_direct"
  std::string precision;       // CLBlast's precision code: "16", "32", "64"
  std::string precision_enum;  // "kHalf", "kSingle", "kDouble"
  std::map<std::string, int64_t> parameters;  // exactly the names CLBlast takes, sorted
  std::vector<std::string> left_out;          // gemmtune parameters CLBlast has no equivalent for
  std::vector<std::string> added;  // values CLBlast requires that gemmtune fixes implicitly
};

// The CLBlast form of `entry`, or nullopt with `why` when CLBlast has no such kernel or precision
// (e.g. xgemm_fast, or fp16 with fp32 accumulation).
std::optional<ClblastParameters> to_clblast(const DatabaseEntry& entry, std::string* why);
// Which kernels export to CLBlast and how to tune one: for a database none of whose entries do.
std::string clblast_export_hint();

// The parameter names CLBlast's kernel takes (empty for an unknown kernel).
const std::vector<std::string>& clblast_parameter_names(const std::string& clblast_kernel);

// One output document.
struct ExportFile {
  std::string name;  // suggested file name
  std::string content;
};

struct ExportResult {
  std::vector<ExportFile> files;   // clblast-json gives one per entry, the others one in all
  std::vector<std::string> notes;  // entries skipped and parameters left out, in words
};

// The compiler options an entry was tuned with beyond its parameters' defines (a register cap),
// for the formats that carry build options (c-header, csv); empty for none.
using CompilerOptions = std::function<std::string(const DatabaseEntry&)>;

// What a capped entry needs besides its defines (for kernels that declare a cap; templates in
// `templates_dir`), by the profile's register-cap method: the build option with the value
// (NVIDIA) or the define that selects the source attribute (AMD); none without a profile, a
// method or a template.
CompilerOptions register_cap_options(const std::string& templates_dir,
                                     const DeviceProfile* profile);

// T4 results of `records` (a journal's, or a database's entries).
ExportResult export_t4(const std::vector<T4Record>& records);
// Each entry of `db` as a T4 record (its configuration, problem and timing).
std::vector<T4Record> t4_records(const Database& db);

// `source` names the database in comments of the generated code.
ExportResult export_database(const Database& db, ExportFormat format, const std::string& source,
                             const CompilerOptions& compiler_options = {});

// CLBlast tuner JSON of one entry; the device fields come from the database's device identity.
nlohmann::ordered_json clblast_tuner_json(const DatabaseDevice& device, const DatabaseEntry& entry,
                                          const ClblastParameters& params);

}  // namespace gemmtune
