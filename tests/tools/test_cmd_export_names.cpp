// SPDX-License-Identifier: Apache-2.0
// export's names through the gemmtune binary: entries that differ only in what CLBlast's own names
// leave out (the batch layout, the batch, the storage order, the epilogue, the gemmtune kernel of a
// CLBlast family) go to files and functions of their own, never one over another.
#include <catch2/catch.hpp>

#include <algorithm>
#include <filesystem>
#include <regex>
#include <set>
#include <string>

#include "src/db/database.hpp"
#include "src/db/export.hpp"
#include "tests/tools/cli_helpers.hpp"

// The file's own namespace: the test files compile in unity batches.
namespace gemmtune_tests::tools_test_cmd_export_names {

using namespace gemmtune;
using test::run_gemmtune;

TEST_CASE("export gives every entry a name of its own", "[cli][export]") {
  const auto dir = test::temp_dir("export-names");
  auto db = Database::load(test::kDb);
  const auto direct = std::find_if(db.entries().begin(), db.entries().end(),
                                   [](const auto& e) { return e.key.kernel == "xgemm_direct"; });
  REQUIRE(direct != db.entries().end());
  DatabaseEntry strided = *direct;
  strided.key.shape = Shape{32, 32, 32};
  strided.key.batch = 1024;
  strided.key.batch_layout = BatchLayout::kStrided;
  DatabaseEntry offsets = strided;
  offsets.key.batch_layout = BatchLayout::kOffsets;
  DatabaseEntry single = strided;
  single.key.batch = 1;
  DatabaseEntry column = single;
  column.key.order = Order::kColMajor;
  DatabaseEntry theirs = single;
  theirs.key.kernel = "clblast-xgemm-direct";
  for (const auto& e : {strided, offsets, single, column, theirs}) db.put(e, true);
  const std::string path = dir + "/db.json";
  db.save(path);

  auto r = run_gemmtune("-q export " + path + " -f clblast-json -o " + dir + "/json/");
  INFO(r.err);
  REQUIRE(r.exit_code == 0);
  size_t exportable = 0;
  const Database saved = Database::load(path);
  for (const auto& e : saved.entries()) {
    std::string why;
    if (to_clblast(e, &why) && e.status == Status::kOk) ++exportable;
  }
  size_t files = 0;
  for (const auto& f : std::filesystem::directory_iterator(dir + "/json")) {
    (void)f;
    ++files;
  }
  CHECK(files == exportable);
  CHECK(test::exists(dir + "/json/clblast_xgemm_direct_1_32_nn_b1024_strided_32x32x32.json"));
  CHECK(test::exists(dir + "/json/clblast_xgemm_direct_1_32_nn_b1024_offsets_32x32x32.json"));
  CHECK(test::exists(dir + "/json/clblast_xgemm_direct_1_32_nn_col_32x32x32.json"));
  CHECK(
      test::exists(dir + "/json/clblast_xgemm_direct_1_32_clblast_xgemm_direct_nn_32x32x32.json"));

  // The override snippet: one function per entry, none defined twice.
  r = run_gemmtune("-q export " + path + " -f clblast-override");
  REQUIRE(r.exit_code == 0);
  const std::regex function(R"(gemmtune_override_(\w+)\(cl_device_id)");
  std::set<std::string> names;
  size_t functions = 0;
  for (auto it = std::sregex_iterator(r.out.begin(), r.out.end(), function);
       it != std::sregex_iterator(); ++it, ++functions) {
    names.insert((*it)[1].str());
  }
  CHECK(functions >= 5);
  CHECK(names.size() == functions);
}

}  // namespace gemmtune_tests::tools_test_cmd_export_names
