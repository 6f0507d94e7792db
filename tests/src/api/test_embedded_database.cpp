// SPDX-License-Identifier: Apache-2.0
// A database compiled into the library (GEMMTUNE_EMBED_DATABASES): tests/data/embed_db_cpu.json,
// exported with `gemmtune export --format embed` and compiled in at build time (CMakeLists.txt),
// seen through the public interface only, as an application sees it.
#include <algorithm>
#include <string>

#include "tests/src/api/api_test_support.hpp"

using namespace gemmtune;
using api_test::Cl;

TEST_CASE("embedded: a database compiled into the library ranks above system, under user ones",
          "[api][embedded][device]") {
  const Cl* cl = api_test::device_or_skip();
  if (!cl) return;
  REQUIRE(SetDatabase("") == StatusCode::kSuccess);
  GemmProblem p;
  p.m = 37;
  p.n = 21;
  p.k = 13;
  Explanation e;
  REQUIRE(Explain(p, cl->queue, &e) == StatusCode::kSuccess);
  const std::string origin = "embedded/embed_db_cpu.json";
  INFO(e.source << " " << e.origin << " " << e.kernel << " " << e.parameters);
  if (e.profile == "cpu-generic") {
    // The database names the profile of every CPU device: its exact entry runs.
    CHECK(e.source == "embedded database");
    CHECK(e.origin == origin);
    CHECK(e.exact);
    CHECK(e.kernel == "xgemm_direct");
    CHECK(e.parameters.find("KWID=4") != std::string::npos);
    CHECK(e.parameters.find("WGD=16") != std::string::npos);
    CHECK(api_test::run_quietly<float>(*cl, cl->queue, Layout::kRowMajor, Transpose::kNo, 37, 21,
                                       13, 0.0, 7) == "");
  } else {
    // Another kind of device: the database does not apply, and a note says why.
    CHECK(e.source != "embedded database");
    const bool noted = std::any_of(e.notes.begin(), e.notes.end(), [&](const std::string& n) {
      return n.find(origin + " not used") != std::string::npos;
    });
    CHECK(noted);
  }

  // The user database still overrides it.
  const std::string user = api_test::temp_dir() + "/user.json";
  api_test::write_database(user, cl->device_name,
                           {{"xgemm_direct", "NN", 37, 21, 13, api_test::kDirectParameters}});
  REQUIRE(SetDatabase(user) == StatusCode::kSuccess);
  REQUIRE(Explain(p, cl->queue, &e) == StatusCode::kSuccess);
  CHECK(e.source == "user database");
  CHECK(e.origin == user);
  REQUIRE(SetDatabase("") == StatusCode::kSuccess);
}
