// SPDX-License-Identifier: Apache-2.0
// A small database for the tests of the scripts that rewrite a database's entries for
// `gemmtune bench` (scripts/splitk-entries.py, scripts/kslice-entries.py).
#pragma once

#include <string>

#include <catch2/catch.hpp>
#include <nlohmann/json.hpp>

#include "src/core/json_util.hpp"
#include "tests/test_support.hpp"

namespace gemmtune::test {

// One FP32 row-major NN entry of `kernel` at M x 40 x 96 with `parameters`, measured ok.
inline nlohmann::json fixture_entry(const std::string& kernel, int64_t m,
                                    const nlohmann::json& parameters) {
  return {{"key",
           {{"kernel", kernel},
            {"precision", "32"},
            {"layout", "NN"},
            {"order", "row"},
            {"batch", 1},
            {"m", m},
            {"n", 40},
            {"k", 96}}},
          {"parameters", parameters},
          {"status", "ok"},
          {"gflops", 5.0}};
}

// A database of `entries` for the CPU profile, its device named after `id`.
inline nlohmann::json fixture_database(const std::string& id, const nlohmann::json& entries) {
  return {{"format", "gemmtune-database"},
          {"schema_version", 1},
          {"device", {{"id", id}, {"name", id}, {"profile", "cpu-generic"}}},
          {"metadata", {{"gemmtune_version", "0.1.0"}}},
          {"entries", entries}};
}

// A database `id` of two entries of xgemm_fast with 16x16 tiles at M = 33 and 34, the first with
// `first` set in its parameters and the second with `second`.
inline nlohmann::json two_tile_entries(const std::string& id, const nlohmann::json& first,
                                       const nlohmann::json& second) {
  const nlohmann::json tile = {{"MWG", 16},  {"NWG", 16}, {"MDIMC", 4},
                               {"NDIMC", 4}, {"KWG", 8},  {"VWM", 1}};
  nlohmann::json a = tile, b = tile;
  a.update(first);
  b.update(second);
  return fixture_database(id,
                          {fixture_entry("xgemm_fast", 33, a), fixture_entry("xgemm_fast", 34, b)});
}

// `gemmtune bench` of the database a script wrote to DIR/out.json: its one entry, measured into
// DIR/measured.json and checked to have run and agreed with the reference.
inline nlohmann::json bench_single_entry(const std::string& dir) {
  const auto bench =
      run_gemmtune("bench " + dir + "/out.json -o " + dir + "/measured.json --min-time-ms 1");
  INFO(bench.err);
  REQUIRE(bench.exit_code == 0);
  const nlohmann::json measured = read_json_file(dir + "/measured.json");
  REQUIRE(measured.at("entries").size() == 1);
  CHECK(measured.at("entries")[0].at("status") == "ok");
  return measured.at("entries")[0];
}

// `python3 scripts/SCRIPT ARGS` from the source tree, with GEMMTUNE the build's gemmtune.
inline CommandResult run_script(const std::string& script, const std::string& args) {
  return run_command_in("", std::string("GEMMTUNE=") + GEMMTUNE_BINARY,
                        "python3 " + source_path("scripts/" + script) + " " + args);
}

}  // namespace gemmtune::test
