// SPDX-License-Identifier: Apache-2.0
// `gemmtune db calibrate`: the selection model's constants fitted to search journals, as a user
// runs it on their own device's journals. On the H100 journals checked in (tests/data/h100/search*)
// it gives the constants gemmtune ships; journals it cannot fit are refused with one line.
#include <catch2/catch.hpp>

#include <algorithm>
#include <filesystem>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "src/db/journal.hpp"
#include "src/device/device_profile.hpp"
#include "src/kernel/kernel_spec.hpp"
#include "src/select/model.hpp"
#include "src/select/policy.hpp"
#include "tests/test_support.hpp"

// The file's own namespace: the test files compile in unity batches.
namespace gemmtune_tests::tools_test_cmd_db_calibrate {

using namespace gemmtune;
using gemmtune::test::run_gemmtune;
using gemmtune::test::source_path;

namespace {

// The search journals of tests/data/h100/search*, as one argument list.
std::string h100_journals() {
  std::vector<std::string> journals;
  for (const auto& dir : std::filesystem::directory_iterator(source_path("tests/data/h100"))) {
    if (dir.path().filename().string().rfind("search", 0) != 0) continue;
    for (const auto& f : std::filesystem::directory_iterator(dir.path())) {
      if (f.path().extension() == ".jsonl") journals.push_back(f.path().string());
    }
  }
  std::sort(journals.begin(), journals.end());
  std::string args;
  for (const auto& j : journals) args += " " + j;
  return args;
}

// A journal of `device` holding xgemm's default configuration measured at each of `shapes`.
std::string write_journal(const std::string& path, const nlohmann::json& device,
                          const std::vector<Shape>& shapes) {
  static const KernelSpec spec = KernelSpec::load(source_path("kernel_templates/xgemm.json"));
  JournalWriter w(path);
  w.write_header({{"device", device}, {"kernel", "xgemm"}});
  double gflops = 100;
  for (const auto& s : shapes) {
    Problem p;
    p.shape = s;
    Result r;
    r.config = spec.defaults();
    r.status = Status::kOk;
    r.gflops = gflops;
    // A result that ran took time: the journal reader refuses one that did not.
    r.time.median_ms = r.time.min_ms = r.time.mean_ms = r.time.max_ms =
        p.flops() / (gflops * 1e6);
    r.time.runs = 1;
    gflops *= 2;
    w.append("xgemm", p, r, 0);
  }
  return path;
}

const nlohmann::json kDevice = {{"id", "test-gpu"},      {"name", "Test GPU"},
                                {"profile", "generic"},  {"compute_units", 16},
                                {"max_clock_mhz", 1000}, {"type", "gpu"}};

}  // namespace

TEST_CASE("db calibrate on the H100 journals gives the shipped constants", "[cli][select][h100]") {
  const auto r = run_gemmtune("db calibrate --json" + h100_journals());
  INFO(r.err);
  REQUIRE(r.exit_code == 0);
  const auto j = nlohmann::json::parse(r.out);
  CHECK(j.at("device") == "NVIDIA H100 80GB HBM3");
  CHECK(j.at("profile") == "sm_90");
  CHECK(j.at("pairs").get<size_t>() > 0);
  // The model explains the change between shapes better than taking GFLOPS to be constant.
  CHECK(j.at("mean_abs_log_error").get<double>() <
        j.at("unmodelled_mean_abs_log_error").get<double>());
  // The sm_90 profile's constants, which the chooser uses on the H100.
  const ModelConstants shipped =
      SelectionPolicy::of(ProfileSet::load_dir(source_path("devices")).find("sm_90")).model;
  const auto& c = j.at("constants");
  CHECK(c.at("saturation_groups") == shipped.saturation_groups);
  CHECK(c.at("group_overhead") == shipped.group_overhead);
  CHECK(c.at("edge_cost") == shipped.edge_cost);
  CHECK(c.at("bandwidth_efficiency") == shipped.bandwidth_efficiency);
  CHECK(c.at("launch_us") == shipped.launch_us);
  CHECK(c.at("rate_cap") == shipped.rate_cap);
  CHECK(c.at("distance_penalty").get<double>() == Approx(shipped.distance_penalty).margin(0.0005));
  CHECK(j.at("shipped").at("rate_cap") == shipped.rate_cap);
}

TEST_CASE("db calibrate prints each constant beside the shipped one", "[cli][select]") {
  const auto dir = test::temp_dir("calibrate-table");
  const auto journal =
      write_journal(dir + "/a.jsonl", kDevice, {{256, 256, 256}, {512, 512, 512}, {1024, 64, 64}});
  const auto r = run_gemmtune("db calibrate " + journal);
  INFO(r.err);
  REQUIRE(r.exit_code == 0);
  CHECK_THAT(r.out, Catch::Contains("device     Test GPU"));
  CHECK_THAT(r.out, Catch::Contains("3 measurements in 1 journals: 6 transfer pairs"));
  for (const char* name : {"saturation_groups", "group_overhead", "edge_cost",
                           "bandwidth_efficiency", "launch_us", "rate_cap", "distance_penalty"}) {
    CHECK_THAT(r.out, Catch::Contains(name));
  }
}

TEST_CASE("db calibrate refuses journals it cannot fit with one line", "[cli][select]") {
  const auto dir = test::temp_dir("calibrate-refused");
  // One shape: no configuration measured at two shapes, nothing to fit.
  const auto one_shape = write_journal(dir + "/one.jsonl", kDevice, {{256, 256, 256}});
  auto r = run_gemmtune("db calibrate " + one_shape);
  CHECK(r.exit_code == 2);
  CHECK_THAT(r.err, Catch::Contains("two shapes"));
  CHECK(std::count(r.err.begin(), r.err.end(), '\n') == 1);

  // Two devices: one model cannot fit both.
  nlohmann::json other = kDevice;
  other["id"] = "other-gpu";
  const auto a = write_journal(dir + "/a.jsonl", kDevice, {{256, 256, 256}, {512, 512, 512}});
  const auto b = write_journal(dir + "/b.jsonl", other, {{256, 256, 256}, {512, 512, 512}});
  r = run_gemmtune("db calibrate " + a + " " + b);
  CHECK(r.exit_code == 2);
  CHECK_THAT(r.err, Catch::Contains("two devices") && Catch::Contains("other-gpu"));
  CHECK(std::count(r.err.begin(), r.err.end(), '\n') == 1);

  // A journal without a device in its header, a file that is not a journal, a missing one.
  const auto bare = dir + "/bare.jsonl";
  {
    JournalWriter w(bare);
    w.write_header({{"kernel", "xgemm"}});
  }
  r = run_gemmtune("db calibrate " + bare);
  CHECK(r.exit_code == 2);
  CHECK_THAT(r.err, Catch::Contains("bare.jsonl") && Catch::Contains("device"));
  r = run_gemmtune("db calibrate " + source_path("README.md"));
  CHECK(r.exit_code == 2);
  CHECK_THAT(r.err, Catch::Contains("is not a search journal"));
  CHECK(std::count(r.err.begin(), r.err.end(), '\n') == 1);
  r = run_gemmtune("db calibrate " + dir + "/missing.jsonl");
  CHECK(r.exit_code == 2);
}

}  // namespace gemmtune_tests::tools_test_cmd_db_calibrate
