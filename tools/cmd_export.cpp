// SPDX-License-Identifier: Apache-2.0
// gemmtune export: a tuned database in other libraries' formats.
#include <algorithm>
#include <filesystem>
#include <iostream>

#include <spdlog/spdlog.h>

#include "src/core/error.hpp"
#include "src/core/file_identity.hpp"
#include "src/core/json_util.hpp"
#include "src/db/export.hpp"
#include "src/db/recording.hpp"
#include "tools/commands.hpp"

namespace gemmtune::cli {

namespace {

struct ExportArgs {
  std::string db, format, out, kernel;
  bool force = false;
};

ExportResult export_db(const GlobalOptions& options, const ExportArgs& a, ExportFormat format) {
  auto db = Database::load(a.db, templates_dir(options));
  if (!a.kernel.empty()) {
    Database only;
    only.device = db.device;
    only.metadata = db.metadata;
    for (const auto& e : db.entries()) {
      if (e.key.kernel == a.kernel) only.put(e, true);
    }
    if (only.entries().empty()) {
      throw invalid_argument(a.db + " has no entry of kernel " + a.kernel);
    }
    db = only;
  }
  // The database names the profile it was tuned with; its register-cap option goes with the
  // entries that used a cap.
  const ProfileSet profiles = load_profiles(options);
  return export_database(
      db, format, std::filesystem::path(a.db).filename(),
      register_cap_options(templates_dir(options), profiles.find(db.device.profile)));
}

// A journal's results as T4: each result measured (failures with their class), not only the best.
ExportResult export_journal_t4(const std::string& path, const std::string& kernel) {
  Journal journal = read_journal(path);
  if (!kernel.empty()) {
    auto& e = journal.entries;
    e.erase(std::remove_if(e.begin(), e.end(),
                           [&](const JournalEntry& x) { return x.kernel != kernel; }),
            e.end());
  }
  if (journal.entries.empty()) {
    throw invalid_argument(path + " has no result" +
                           (kernel.empty() ? "" : " of kernel " + kernel));
  }
  return export_t4(t4_records(journal));
}

}  // namespace

void set_export_command(CLI::App& app, GlobalOptions& options) {
  auto* cmd = app.add_subcommand(
      "export", "Export a tuned database for CLBlast, C, CSV, T4, or to compile into libgemmtune");
  auto a = std::make_shared<ExportArgs>();
  cmd->add_option("DB", a->db, "Database file (for t4 also a search journal: every result)")
      ->required();
  cmd->add_option("-f,--format", a->format,
                  "clblast-json, clblast-override, c-header, csv, embed (a C++ header for "
                  "libgemmtune's GEMMTUNE_EMBED_DATABASES) or t4 (T4 results JSON)")
      ->required();
  cmd->add_option("-o,--output", a->out,
                  "Output file (default: stdout); a folder for clblast-json with several entries");
  cmd->add_option("--kernel", a->kernel, "Export only the entries of this kernel");
  cmd->add_flag("--force", a->force, "Replace an output file that is a tuned database");
  // An output never replaces the database read, and replaces another only with --force.
  const auto check_output = [a](const std::string& path) {
    check_output_not_input(path, {{a->db, "DB"}}, "-o/--output");
    if (!a->force) check_not_replacing(path, "-o/--output", kDatabaseFormat, "a tuned database");
  };
  cmd->callback([a, &options, check_output]() {
    check_output(a->out);
    const auto format = parse_export_format(a->format);
    const ExportResult result = format == ExportFormat::kT4 && is_journal_file(a->db)
                                    ? export_journal_t4(a->db, a->kernel)
                                    : export_db(options, *a, format);
    for (const auto& note : result.notes) spdlog::warn("{}", note);
    if (result.files.empty()) {
      const bool clblast =
          format == ExportFormat::kClblastJson || format == ExportFormat::kClblastOverride;
      throw invalid_argument(a->db + ": no entry can be exported as " + a->format +
                             (clblast ? "; " + clblast_export_hint() : std::string()));
    }
    namespace fs = std::filesystem;
    std::error_code ec;
    const bool to_dir = !a->out.empty() && (fs::is_directory(a->out, ec) || a->out.back() == '/');
    if (result.files.size() > 1 && !to_dir) {
      throw invalid_argument(a->format + " gives one file per entry (" +
                             std::to_string(result.files.size()) +
                             " here): pass -o FOLDER/, or --kernel to select entries");
    }
    if (a->out.empty()) {
      std::cout << result.files.front().content;
      return;
    }
    if (to_dir) {
      for (const auto& f : result.files) check_output((fs::path(a->out) / f.name).string());
      fs::create_directories(a->out, ec);
      for (const auto& f : result.files) {
        const std::string path = (fs::path(a->out) / f.name).string();
        write_file_atomic(path, f.content);
        spdlog::info("wrote {}", path);
      }
      return;
    }
    write_file_atomic(a->out, result.files.front().content);
    spdlog::info("wrote {}", a->out);
  });
}

}  // namespace gemmtune::cli
