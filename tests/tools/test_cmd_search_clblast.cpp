// SPDX-License-Identifier: Apache-2.0
// The CLBlast backend end to end through the command line: a search of clblast-xgemm measures
// configurations inside CLBlast and writes a tuned database; its clblast-json export is accepted
// by clblast::OverrideParameters, and clblast::Gemm with it computes what a plain loop does.
// Slow on PoCL: every configuration is a CLBlast program build. The search goes through the
// evaluator factory, as every search does.
#include <catch2/catch.hpp>

#include <filesystem>
#include <random>
#include <unordered_map>

#include "src/core/json_util.hpp"
#include "src/db/database.hpp"
#include "src/device/device.hpp"
#include "tests/test_support.hpp"
#include "tests/tools/cli_helpers.hpp"

#if GEMMTUNE_HAVE_CLBLAST
#include <clblast.h>
#endif

// The file's own namespace: the test files compile in unity batches.
namespace gemmtune_tests::tools_test_cmd_search_clblast {

using namespace gemmtune;
using test::run_gemmtune;

#if GEMMTUNE_HAVE_CLBLAST

TEST_CASE("search --kernel clblast-xgemm tunes CLBlast and its export drives clblast::Gemm",
          "[cli][clblast][pocl][slow]") {
  const std::string dir = test::temp_dir("clblast-backend");
  const std::string db_path = dir + "/db.json";
  // Two evaluations: CLBlast compiles each configuration anew (a dozen kernels), slowly on PoCL.
  auto r = run_gemmtune(
      "search --kernel clblast-xgemm -s 256x256x256 --max-evals 2"
      " --strategy random --seed 3 --json --db " +
      db_path + " -o " + dir + "/search.json --eval-timeout 900");
  INFO(r.out << r.err);
  REQUIRE(r.exit_code == 0);
  const auto summary = nlohmann::json::parse(r.out).at("results").at(0);
  CHECK(summary.at("evaluations") == 2);
  CHECK(summary.at("best").at("status") == "ok");
  const Database db = Database::load(db_path);
  REQUIRE(db.entries().size() == 1);
  const DatabaseEntry& entry = db.entries().front();
  CHECK(entry.key.kernel == "clblast-xgemm");
  CHECK(entry.status == Status::kOk);
  CHECK(entry.gflops > 0);
  CHECK(entry.found.evaluations == 2);

  r = run_gemmtune("export " + db_path + " -f clblast-json -o " + dir + "/clblast/");
  INFO(r.err);
  REQUIRE(r.exit_code == 0);
  std::vector<std::filesystem::path> files;
  for (const auto& f : std::filesystem::directory_iterator(dir + "/clblast")) {
    files.push_back(f.path());
  }
  REQUIRE(files.size() == 1);
  const nlohmann::json j = read_json_file(files.front().string());
  REQUIRE(j["best_kernel"] == "Xgemm");
  REQUIRE(j["results"].size() == 1);
  // What CLBlast's database loader reads: the parameters of the best result, PRECISION aside.
  std::unordered_map<std::string, size_t> params;
  for (const auto& [name, value] : j["results"][0]["parameters"].items()) {
    if (name != "PRECISION") params[name] = value.get<size_t>();
  }
  for (const auto& [name, value] : entry.parameters) {
    INFO(name);
    REQUIRE(params.count(name));
    CHECK(params.at(name) == static_cast<size_t>(value));
  }

  const auto profiles = ProfileSet::load_dir(test::source_path("devices"));
  const Device device = select_device("", &profiles);
  REQUIRE(clblast::OverrideParameters(device.device(), "Xgemm", clblast::Precision::kSingle,
                                      params) == clblast::StatusCode::kSuccess);
  // Force the indirect kernel, the one the override configures.
  REQUIRE(clblast::OverrideParameters(device.device(), "GemmRoutine", clblast::Precision::kSingle,
                                      {{"XGEMM_MIN_INDIRECT_SIZE", 0}}) ==
          clblast::StatusCode::kSuccess);
  const size_t m = 256, n = 256, k = 256;
  std::mt19937 rng(5);
  std::uniform_int_distribution<int> dist(-3, 3);  // small integers: every sum exact in float
  std::vector<float> a(m * k), b(k * n), c(m * n, 1.0f);
  for (auto* v : {&a, &b}) {
    for (auto& x : *v) x = static_cast<float>(dist(rng));
  }
  std::vector<float> expected(m * n);
  for (size_t i = 0; i < m; ++i) {
    for (size_t jj = 0; jj < n; ++jj) {
      float sum = 0;
      for (size_t l = 0; l < k; ++l) sum += a[i * k + l] * b[l * n + jj];
      expected[i * n + jj] = 2.0f * sum + 0.5f * c[i * n + jj];
    }
  }
  cl::Context context(device.device);
  cl::CommandQueue queue(context, device.device);
  auto buffer = [&](std::vector<float>& v) {
    return cl::Buffer(context, CL_MEM_READ_WRITE | CL_MEM_COPY_HOST_PTR, v.size() * sizeof(float),
                      v.data());
  };
  cl::Buffer da = buffer(a), dbuf = buffer(b), dc = buffer(c);
  cl_command_queue q = queue();
  REQUIRE(clblast::Gemm<float>(clblast::Layout::kRowMajor, clblast::Transpose::kNo,
                               clblast::Transpose::kNo, m, n, k, 2.0f, da(), 0, k, dbuf(), 0, n,
                               0.5f, dc(), 0, n, &q, nullptr) == clblast::StatusCode::kSuccess);
  std::vector<float> got(m * n);
  queue.enqueueReadBuffer(dc, CL_TRUE, 0, got.size() * sizeof(float), got.data());
  size_t wrong = 0;
  for (size_t i = 0; i < got.size(); ++i) {
    if (got[i] != expected[i]) ++wrong;
  }
  CHECK(wrong == 0);
}

#else

TEST_CASE("without CLBlast, search --kernel clblast-xgemm is refused with one line",
          "[cli][clblast]") {
  const std::string dir = test::temp_dir("clblast-backend");
  const auto r = run_gemmtune("search --kernel clblast-xgemm -s 64x64x64 --max-evals 1 --db " +
                              dir + "/db.json -o " + dir + "/s.json");
  CHECK(r.exit_code != 0);
  CHECK_THAT(r.err, Catch::Contains("without CLBlast"));
}

#endif

}  // namespace gemmtune_tests::tools_test_cmd_search_clblast
