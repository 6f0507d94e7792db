// SPDX-License-Identifier: Apache-2.0
// What the exporters of export.cpp and export_clblast.cpp share: names made of a database's keys,
// text escaped for the formats, and the CLBlast exporters the dispatch calls.
#pragma once

#include <string>
#include <vector>

#include "src/db/database.hpp"
#include "src/db/export.hpp"

namespace gemmtune::export_detail {

std::string upper(std::string s);
// A C identifier fragment: letters, digits and underscores only.
std::string ident(const std::string& s);
// What tells apart entries of one kernel and precision in a name, each part of the key: the
// layout, the batch (with its layout when there is more than one matrix) and the shape, the
// storage order where it is not row-major and the epilogue where there is one.
std::string problem_ident(const EntryKey& k);
// A C identifier of the entry: the kernel, precision, order, layout, batch and shape, then the
// batch layout of a batch and the epilogue where there is one.
std::string entry_ident(const EntryKey& k);
// C/C++ string literal contents: quotes, backslashes and control characters escaped.
std::string c_escape(const std::string& s);
// A comment line must not close the comment early.
std::string comment_safe(std::string s);
std::string join(const std::vector<std::string>& v, const std::string& sep);
// The lines naming the device, the driver and the source, each after `prefix`.
std::string header_comment_lines(const Database& db, const std::string& source,
                                 const std::string& prefix);
double entry_time_ms(const DatabaseEntry& e);

ExportResult export_clblast_json(const Database& db);
ExportResult export_clblast_override(const Database& db, const std::string& source);

}  // namespace gemmtune::export_detail
