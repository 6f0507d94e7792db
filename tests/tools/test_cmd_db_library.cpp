// SPDX-License-Identifier: Apache-2.0
// `gemmtune db lookup` and libgemmtune choose alike: the same database, asked for the same
// problem through the command line and through the library's public interface (Explain), gives
// the same kernel and parameters from the same entry, where the chooser relaxes the problem too.
#include <string>
#include <vector>

#include <catch2/catch.hpp>

#include "gemmtune/gemmtune.hpp"
#include "src/db/database.hpp"
#include "src/device/opencl.hpp"
#include "tests/test_support.hpp"

// The file's own namespace: the test files compile in unity batches.
namespace gemmtune_tests::tools_test_cmd_db_library {

using namespace gemmtune;
using gemmtune::test::run_gemmtune;
using gemmtune::test::temp_dir;

namespace {

// xgemm_fast parameters every device runs (a 16x32 tile on 4x8 threads), not its defaults.
const Configuration kFast = {{"MWG", 16},  {"NWG", 32}, {"KWG", 8}, {"MDIMC", 4},
                             {"NDIMC", 8}, {"VWM", 2},  {"VWN", 2}, {"GLV", 4}};
// xgemm's defaults: a faster entry that fuses no epilogue.
const Configuration kPlain = {};

DatabaseEntry entry(const std::string& kernel, const std::string& layout, Shape shape,
                    double gflops, const Configuration& parameters) {
  DatabaseEntry e;
  e.key.kernel = kernel;
  e.key.layout = layout;
  e.key.shape = shape;
  e.parameters = parameters;
  e.gflops = gflops;
  return e;
}

// What both say for one problem: `args` for `db lookup`, `problem` for Explain.
struct Both {
  nlohmann::json lookup;
  Explanation library;
};

Both ask(const std::string& db, const std::string& args, const GemmProblem& problem,
         cl_command_queue queue) {
  Both out;
  const auto r = run_gemmtune("db lookup " + db + " " + args + " --json");
  INFO(r.err);
  REQUIRE(r.exit_code == 0);
  out.lookup = nlohmann::json::parse(r.out);
  INFO(LastErrorMessage());
  REQUIRE(Explain(problem, queue, &out.library) == StatusCode::kSuccess);
  return out;
}

// The same database entry: `db lookup` prints it whole, Explain names its key.
bool same_entry(const Both& b) {
  return b.lookup.contains("entry") &&
         b.lookup["entry"]["key"].get<EntryKey>().to_string() == b.library.entry;
}

bool noted(const Explanation& e, const std::string& text) {
  for (const auto& n : e.notes) {
    if (n.find(text) != std::string::npos) return true;
  }
  return false;
}

}  // namespace

TEST_CASE("db lookup and the library choose the same configuration for relaxed problems",
          "[cli][database][device]") {
  const auto& test_device = gemmtune::test::test_device();
  if (!test_device.device) return gemmtune::test::unavailable("no OpenCL device");
  const Device& device = *test_device.device;
  // A database of this device: row-major entries only, none with an epilogue.
  const std::string db = temp_dir("db-lookup-library") + "/db.json";
  Database d;
  d.device = DatabaseDevice::from(device.info);
  d.put(entry("xgemm_fast", "NT", {64, 48, 32}, 700, kFast), true);
  d.put(entry("xgemm_fast", "NN", {96, 80, 64}, 300, kFast), true);
  d.put(entry("xgemm", "NN", {96, 80, 64}, 900, kPlain), true);
  d.save(db);
  REQUIRE(SetDatabase(db) == StatusCode::kSuccess);
  cl::Context context(device.device);
  cl::CommandQueue queue(context, device.device);

  SECTION("a column-major problem takes the row-major entry of its kernel view") {
    GemmProblem p;
    p.layout = Layout::kColMajor;
    p.a_transpose = Transpose::kYes;
    p.m = 48;
    p.n = 64;
    p.k = 32;
    const Both b = ask(db, "--order col --layout TN -m 48 -n 64 -k 32", p, queue());
    CHECK(b.lookup["match"] == "exact");
    CHECK(b.lookup["relaxed"] == "storage order");
    CHECK(b.library.source == "user database");
    CHECK(b.library.exact);
    CHECK(noted(b.library, "the entry differs from the problem in: storage order"));
    CHECK(b.lookup["kernel"] == b.library.kernel);
    CHECK(to_string(configuration_from_json(b.lookup["parameters"])) == b.library.parameters);
    CHECK(b.lookup["origin"] == b.library.origin);
    CHECK(same_entry(b));
    CHECK(b.library.kernel == "xgemm_fast");
  }

  SECTION("an epilogue problem takes the entry without one whose template fuses it") {
    GemmProblem p;
    p.m = 96;
    p.n = 80;
    p.k = 64;
    p.bias = true;
    p.activation = EpilogueActivation::kRelu;
    const Both b = ask(db, "-m 96 -n 80 -k 64 --epilogue bias,relu", p, queue());
    CHECK(b.lookup["match"] == "exact");
    CHECK(b.lookup["relaxed"] == "epilogue");
    CHECK(b.library.exact);
    CHECK(noted(b.library, "the entry differs from the problem in: epilogue"));
    // The faster xgemm entry fuses no epilogue: both pass it over.
    CHECK(b.lookup["kernel"] == "xgemm_fast");
    CHECK(b.library.kernel == "xgemm_fast");
    CHECK(to_string(configuration_from_json(b.lookup["parameters"])) == b.library.parameters);
    CHECK(same_entry(b));
  }
  REQUIRE(SetDatabase("") == StatusCode::kSuccess);
}

}  // namespace gemmtune_tests::tools_test_cmd_db_library
