// SPDX-License-Identifier: Apache-2.0
// The library and the files it is pointed at: a database that is no regular file (a device, a
// FIFO, a folder) is refused with kInvalidDatabase, whichever way it is named (SetDatabase,
// gemmtune_set_database, GEMMTUNE_DB), without reading it, and the library goes on working. And
// WarmUp refuses what a call refuses.
#include <sys/stat.h>

#include <algorithm>
#include <string>
#include <vector>

#include "gemmtune/gemmtune_c.h"
#include "tests/src/api/api_test_support.hpp"

using namespace gemmtune;

namespace {

bool any_note_contains(const Explanation& e, const std::string& text) {
  return std::any_of(e.notes.begin(), e.notes.end(),
                     [&](const std::string& n) { return n.find(text) != std::string::npos; });
}

}  // namespace

TEST_CASE("api: a database that is no regular file is refused and the library goes on",
          "[api][device]") {
  const api_test::Cl* cl = api_test::device_or_skip();
  if (!cl) return;
  const std::string dir = api_test::temp_dir();
  const std::string fifo = dir + "/fifo.json";
  REQUIRE(::mkfifo(fifo.c_str(), 0600) == 0);
  GemmProblem p;
  p.m = p.n = p.k = 32;
  for (const std::string& path : {std::string("/dev/zero"), fifo, dir}) {
    INFO(path);
    CHECK(SetDatabase(path) == StatusCode::kInvalidDatabase);
    const std::string why = LastErrorMessage();
    CHECK(why.find("not a regular file") != std::string::npos);
    CHECK(why.find("not valid JSON") == std::string::npos);
    CHECK(gemmtune_set_database(path.c_str()) == GEMMTUNE_INVALID_DATABASE);
    // Still working: a call of the library after the refusal.
    Explanation e;
    CHECK(Explain(p, cl->queue, &e) == StatusCode::kSuccess);
  }

  // GEMMTUNE_DB naming one: ignored with a note, the call still runs.
  ::setenv("GEMMTUNE_DB", "/dev/zero", 1);
  REQUIRE(SetDatabase("") == StatusCode::kSuccess);  // takes GEMMTUNE_DB again
  Explanation e;
  REQUIRE(Explain(p, cl->queue, &e) == StatusCode::kSuccess);
  CHECK(e.source != "user database");
  CHECK(any_note_contains(e, "not a regular file"));
  ::unsetenv("GEMMTUNE_DB");
  REQUIRE(SetDatabase("") == StatusCode::kSuccess);
}

TEST_CASE("api: WarmUp refuses what a call refuses", "[api][device]") {
  const api_test::Cl* cl = api_test::device_or_skip();
  if (!cl) return;
  GemmProblem bad_layout;
  bad_layout.m = bad_layout.n = bad_layout.k = 16;
  bad_layout.layout = static_cast<Layout>(7);
  GemmProblem bad_transpose = bad_layout;
  bad_transpose.layout = Layout::kRowMajor;
  bad_transpose.b_transpose = static_cast<Transpose>(99);
  GemmProblem huge = bad_transpose;
  huge.b_transpose = Transpose::kNo;
  huge.m = size_t{1} << 41;
  GemmProblem bad_activation = huge;
  bad_activation.m = 16;
  bad_activation.activation = static_cast<EpilogueActivation>(42);
  GemmProblem bad_precision = bad_activation;
  bad_precision.activation = EpilogueActivation::kNone;
  bad_precision.precision = static_cast<GemmPrecision>(9);
  CHECK(WarmUp(cl->queue, {bad_layout}) == StatusCode::kInvalidArgument);
  CHECK(WarmUp(cl->queue, {bad_transpose}) == StatusCode::kInvalidArgument);
  CHECK(WarmUp(cl->queue, {huge}) == StatusCode::kUnsupported);
  CHECK(WarmUp(cl->queue, {bad_activation}) == StatusCode::kInvalidArgument);
  CHECK(WarmUp(cl->queue, {bad_precision}) == StatusCode::kInvalidArgument);

  // The calls refuse the same problems with the same statuses.
  std::vector<float> host(16 * 16, 1.0f);
  cl_mem a = cl->buffer(host), b = cl->buffer(host), c = cl->buffer(host);
  cl_command_queue q = cl->queue;
  auto call = [&](Layout layout, Transpose tb, size_t m) {
    return Gemm<float>(layout, Transpose::kNo, tb, m, 16, 16, 1.0f, a, 0, 16, b, 0, 16, 0.0f, c, 0,
                       16, &q, nullptr);
  };
  CHECK(call(static_cast<Layout>(7), Transpose::kNo, 16) == StatusCode::kInvalidArgument);
  CHECK(call(Layout::kRowMajor, static_cast<Transpose>(99), 16) == StatusCode::kInvalidArgument);
  CHECK(call(Layout::kRowMajor, Transpose::kNo, size_t{1} << 41) == StatusCode::kUnsupported);
  for (cl_mem m : {a, b, c}) clReleaseMemObject(m);
}
