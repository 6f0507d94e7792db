// SPDX-License-Identifier: Apache-2.0
#include <sys/wait.h>
#include <unistd.h>

#include <cmath>
#include <fstream>

#include <catch2/catch.hpp>

#include "src/core/error.hpp"
#include "src/core/json_util.hpp"
#include "src/db/database.hpp"
#include "tests/test_support.hpp"

// The file's own namespace: the test files compile in unity batches.
namespace gemmtune_tests::src_db_test_database {

using namespace gemmtune;
using gemmtune::test::source_path;
using gemmtune::test::temp_dir;

namespace {

const std::string kFixture = "tests/data/db_gfx1012.json";

DatabaseEntry make_entry(const std::string& kernel, int64_t m, double gflops) {
  DatabaseEntry e;
  e.key.kernel = kernel;
  e.key.shape = Shape{m, m, m};
  e.parameters = {{"MWG", 32}, {"NWG", 32}};
  e.gflops = gflops;
  e.time.median_ms = 2.0 * m * m * m / gflops / 1e6;
  e.time.cv = 0.01;
  e.found.strategy = "random";
  e.found.evaluations = 10;
  e.found.seed = 7;
  return e;
}

DatabaseDevice make_device(const std::string& name) {
  DatabaseDevice d;
  d.id = "test-device";
  d.name = name;
  d.vendor = "Test Vendor";
  d.driver_version = "1.0";
  return d;
}

std::string error_of(const std::function<void()>& f) {
  try {
    f();
  } catch (const Error& e) {
    return e.what();
  }
  return "";
}

void write(const std::string& path, const std::string& text) {
  std::ofstream(path, std::ios::binary) << text;
}

}  // namespace

TEST_CASE("database fixture loads with every field", "[database]") {
  const auto db = Database::load(source_path(kFixture));
  CHECK(db.device.name == "gfx1012");
  CHECK(db.device.profile == "gfx1012");
  CHECK(db.device.compute_units == 22);
  REQUIRE(db.entries().size() == 4);
  const auto* e = db.find([] {
    EntryKey k;
    k.kernel = "xgemm";
    k.shape = Shape{4096, 4096, 4096};
    return k;
  }());
  REQUIRE(e);
  CHECK(e->gflops == Approx(3900.25));
  CHECK(e->parameters.at("MWG") == 128);
  CHECK(e->time.cv == Approx(0.004));
  CHECK(e->found.strategy == "random");
  CHECK(e->found.seed == 42);
  // Entries come back sorted by key whatever the file order.
  for (size_t i = 1; i < db.entries().size(); ++i) {
    CHECK(db.entries()[i - 1].key < db.entries()[i].key);
  }
}

TEST_CASE("database round trip through a file keeps every value", "[database]") {
  const auto dir = temp_dir("db-roundtrip");
  auto db = Database::load(source_path(kFixture));
  auto entry = make_entry("xgemm", 333, 123.456);
  entry.key.precision = Precision::kFP16;
  entry.key.order = Order::kColMajor;
  entry.key.layout = "TN";
  entry.key.batch = 8;
  entry.usage.registers = 96;
  entry.usage.spills = 0;
  entry.usage.local_mem_bytes = 8192;
  entry.usage.source = "AMDGPU metadata";
  entry.alpha = 2.0;
  entry.beta = 0.5;
  entry.found.seed = 18446744073709551615ull;  // the full range of a seed survives JSON
  REQUIRE(db.put(entry, false) == PutOutcome::kAdded);
  db.save(dir + "/db.json");
  const auto back = Database::load(dir + "/db.json");
  CHECK(back.to_json()["entries"] == db.to_json()["entries"]);
  CHECK(back.to_json()["device"] == db.to_json()["device"]);
  const auto* e = back.find(entry.key);
  REQUIRE(e);
  CHECK(e->key.layout == "TN");
  CHECK(e->key.batch == 8);
  CHECK(e->usage.registers == 96);
  CHECK(e->usage.source == "AMDGPU metadata");
  CHECK(e->alpha == 2.0);
  CHECK(e->found.seed == 18446744073709551615ull);
  CHECK(!back.metadata.updated.empty());
  CHECK(back.metadata.created == "2026-01-10T10:00:00Z");
}

TEST_CASE("configurations measured at many shapes survive a file, and bad figures are refused",
          "[database]") {
  const auto dir = temp_dir("db-measurements");
  auto db = Database::load(source_path(kFixture));
  // Without any, the file has no such section (files stay as they were).
  CHECK_FALSE(db.to_json().contains("measurements"));
  const EntryKey family = make_entry("xgemm_fast", 1, 1).key;
  const Configuration a = {{"MWG", 64}, {"NWG", 64}}, b = {{"MWG", 128}, {"NWG", 64}};
  db.add_measurement(family, a, {256, 512, 128}, 1000.04);
  db.add_measurement(family, a, {90, 32, 724}, 800);
  db.add_measurement(family, a, {256, 512, 128}, 900);  // the faster figure is kept
  db.add_measurement(family, b, {90, 32, 724}, 850);
  db.add_measurement(family, b, {32, 32, 32}, 0.0123456);  // a slow device's tiny shape
  CHECK_THROWS_AS(db.add_measurement(family, b, {1, 1, 1}, std::nan("")), Error);
  db.save(dir + "/db.json");
  const auto back = Database::load(dir + "/db.json");
  REQUIRE(back.measurements().size() == 2);
  const auto& m =
      back.measurements()[0].parameters == a ? back.measurements()[0] : back.measurements()[1];
  REQUIRE(m.gflops.size() == 2);
  CHECK(m.gflops[0].first == Shape{90, 32, 724});
  CHECK(m.gflops[1].first == Shape{256, 512, 128});
  CHECK(m.gflops[1].second == Approx(1000.0));  // five significant digits are kept
  const auto& mb =
      back.measurements()[0].parameters == b ? back.measurements()[0] : back.measurements()[1];
  REQUIRE(mb.gflops.size() == 2);
  CHECK(mb.gflops[0].second == Approx(0.012346));
  CHECK(back.to_json()["measurements"] == db.to_json()["measurements"]);
  // A merge keeps them, the faster figure of a configuration and shape.
  Database other = Database::load(source_path(kFixture));
  other.add_measurement(family, b, {90, 32, 724}, 870);
  const Database merged = merge_databases({back, other}, {"a.json", "b.json"});
  REQUIRE(merged.measurements().size() == 2);
  for (const auto& mc : merged.measurements()) {
    if (mc.parameters == b) CHECK(mc.gflops.back().second == Approx(870));  // 90x32x724
  }
  // A row that is not [M, N, K, GFLOPS] names where it is.
  auto j = db.to_json();
  j["measurements"][0]["gflops"][1] = {256, 512, 0, 10.0};
  CHECK_THROWS_WITH(Database::from_json(j, "bad.json"),
                    Catch::Contains("bad.json") && Catch::Contains("measurements[0].gflops[1]") &&
                        Catch::Contains("at least 1"));
  j["measurements"][0]["gflops"][1] = {256, 512, 128, -1.0};
  CHECK_THROWS_WITH(Database::from_json(j, "bad.json"), Catch::Contains("positive"));
}

TEST_CASE("a file's measurement rows load sorted by shape with the faster of repeated figures",
          "[database]") {
  Database db = Database::load(source_path(kFixture));
  const EntryKey family = make_entry("xgemm_fast", 1, 1).key;
  const Configuration a = {{"MWG", 64}, {"NWG", 64}};
  db.add_measurement(family, a, {90, 32, 724}, 800);
  auto j = db.to_json();
  // Written out of order by hand, one shape twice, and the configuration listed a second time.
  j["measurements"][0]["gflops"] = {
      {256, 512, 128, 900.0}, {16, 16, 16, 5.0}, {256, 512, 128, 1000.0}, {90, 32, 724, 800.0}};
  auto again = j["measurements"][0];
  again["gflops"] = {{16, 16, 16, 7.0}, {4096, 16, 16, 70.0}};
  j["measurements"].push_back(again);
  const Database back = Database::from_json(j, "hand.json");
  REQUIRE(back.measurements().size() == 1);
  const auto& rows = back.measurements()[0].gflops;
  REQUIRE(rows.size() == 4);
  CHECK(rows[0] == std::pair<Shape, double>{{16, 16, 16}, 7.0});
  CHECK(rows[1] == std::pair<Shape, double>{{90, 32, 724}, 800.0});
  CHECK(rows[2] == std::pair<Shape, double>{{256, 512, 128}, 1000.0});
  CHECK(rows[3] == std::pair<Shape, double>{{4096, 16, 16}, 70.0});
}

TEST_CASE("database put keeps the faster entry unless told to replace", "[database]") {
  Database db;
  CHECK(db.put(make_entry("xgemm", 64, 100), false) == PutOutcome::kAdded);
  CHECK(db.put(make_entry("xgemm", 64, 90), false) == PutOutcome::kKeptExisting);
  CHECK(db.entries().front().gflops == 100);
  CHECK(db.put(make_entry("xgemm", 64, 100), false) == PutOutcome::kKeptExisting);
  CHECK(db.put(make_entry("xgemm", 64, 150), false) == PutOutcome::kReplaced);
  CHECK(db.entries().front().gflops == 150);
  CHECK(db.put(make_entry("xgemm", 64, 50), true) == PutOutcome::kReplaced);
  CHECK(db.entries().front().gflops == 50);
  // A failed measurement never displaces a working one, whatever its number says.
  auto failed = make_entry("xgemm", 64, 1e9);
  failed.status = Status::kWrongResult;
  CHECK(db.put(failed, false) == PutOutcome::kKeptExisting);
  CHECK(db.entries().size() == 1);
}

TEST_CASE("database merge keeps the fastest entry per key", "[database]") {
  Database a, b, c;
  a.device = b.device = make_device("Card");
  a.put(make_entry("xgemm", 64, 100), false);
  a.put(make_entry("xgemm", 128, 300), false);
  b.put(make_entry("xgemm", 64, 120), false);
  b.put(make_entry("xgemm", 128, 200), false);
  b.put(make_entry("xgemm_direct", 64, 80), false);
  auto tie = make_entry("xgemm_direct", 64, 80);
  tie.found.strategy = "second";
  c.device = make_device("Card");
  c.put(tie, false);
  const auto merged = merge_databases({a, b, c}, {"a", "b", "c"});
  REQUIRE(merged.entries().size() == 3);
  EntryKey k64;
  k64.shape = Shape{64, 64, 64};
  EntryKey k128 = k64;
  k128.shape = Shape{128, 128, 128};
  CHECK(merged.find(k64)->gflops == 120);
  CHECK(merged.find(k128)->gflops == 300);
  EntryKey kd = k64;
  kd.kernel = "xgemm_direct";
  CHECK(merged.find(kd)->found.strategy == "random");  // the first of equals stays

  Database other;
  other.device = make_device("Other card");
  const auto why = error_of([&] { merge_databases({a, other}, {"a.json", "other.json"}); });
  CHECK_THAT(why, Catch::Contains("other.json") && Catch::Contains("Other card"));
}

TEST_CASE("database lookup finds the exact or the nearest shape in log space", "[database]") {
  const auto db = Database::load(source_path(kFixture));
  EntryKey key;
  key.shape = Shape{1024, 1024, 1024};
  auto m = db.nearest(key);
  REQUIRE(m.entry);
  CHECK(m.exact);
  CHECK(m.distance == 0);
  // 2000 is nearer 1024 than 4096 in log space (ratio 1.95 against 2.05).
  key.shape = Shape{2000, 2000, 2000};
  m = db.nearest(key);
  REQUIRE(m.entry);
  CHECK_FALSE(m.exact);
  CHECK(m.entry->key.shape.m == 1024);
  CHECK(m.distance == Approx(std::sqrt(3.0) * std::log(2000.0 / 1024.0)));
  key.shape = Shape{2100, 2100, 2100};
  CHECK(db.nearest(key).entry->key.shape.m == 4096);
  // Other layouts and kernels are not candidates.
  key.layout = "TT";
  CHECK_FALSE(db.nearest(key).entry);
  key.layout = "NT";
  key.kernel = "xgemm_fast";
  CHECK(db.nearest(key).entry->key.shape.m == 2048);
}

TEST_CASE("database refuses corrupt, truncated and foreign files", "[database]") {
  const auto dir = temp_dir("db-corrupt");
  const std::string good = read_text_file(source_path(kFixture));

  SECTION("syntax error names line and column") {
    std::string bad = good;
    bad.replace(bad.find("\"gflops\": 2850.5"), 16, "\"gflops\": 2850.5,,");
    write(dir + "/bad.json", bad);
    const auto why = error_of([&] { Database::load(dir + "/bad.json"); });
    CHECK_THAT(why, Catch::Contains(dir + "/bad.json") && Catch::Contains("line ") &&
                        Catch::Contains("column"));
  }
  SECTION("truncated file") {
    write(dir + "/cut.json", good.substr(0, good.size() / 2));
    const auto why = error_of([&] { Database::load(dir + "/cut.json"); });
    CHECK_THAT(why, Catch::Contains("cut.json") && Catch::Contains("line "));
  }
  SECTION("another tool's JSON") {
    const auto why = error_of(
        [&] { Database::load(source_path("tests/data/clblast_tuner_xgemm_reference.json")); });
    CHECK_THAT(why,
               Catch::Contains("not a gemmtune database") && Catch::Contains("gemmtune-database"));
  }
  SECTION("unsupported schema version") {
    auto j = nlohmann::json::parse(good);
    j["schema_version"] = 7;
    write(dir + "/v7.json", j.dump());
    const auto why = error_of([&] { Database::load(dir + "/v7.json"); });
    CHECK_THAT(why, Catch::Contains("schema_version") && Catch::Contains("7") &&
                        Catch::Contains("expected 1"));
  }
  SECTION("a bad field names its position") {
    auto j = nlohmann::json::parse(good);
    j["entries"][2]["gflops"] = "fast";
    write(dir + "/field.json", j.dump());
    const auto why = error_of([&] { Database::load(dir + "/field.json"); });
    CHECK_THAT(why, Catch::Contains("entries[2].gflops") && Catch::Contains("expected a number"));
    j = nlohmann::json::parse(good);
    j["entries"][1]["key"]["precision"] = "37";
    write(dir + "/prec.json", j.dump());
    CHECK_THAT(error_of([&] { Database::load(dir + "/prec.json"); }),
               Catch::Contains("entries[1]") && Catch::Contains("precision"));
    j = nlohmann::json::parse(good);
    j["entries"][1]["key"] = j["entries"][0]["key"];
    write(dir + "/dup.json", j.dump());
    CHECK_THAT(error_of([&] { Database::load(dir + "/dup.json"); }), Catch::Contains("duplicate"));
  }
  SECTION("update never overwrites a file it cannot read") {
    const std::string cut = good.substr(0, good.size() - 40);
    write(dir + "/keep.json", cut);
    CHECK_THROWS_AS(Database::update(dir + "/keep.json", make_device("gfx1012"),
                                     make_entry("xgemm", 64, 1), false),
                    Error);
    CHECK(read_text_file(dir + "/keep.json") == cut);
  }
}

TEST_CASE("database update creates, improves and refuses other hardware", "[database]") {
  const auto dir = temp_dir("db-update");
  const std::string path = dir + "/sub/dev.json";
  const auto dev = make_device("Card");
  CHECK(Database::update(path, dev, make_entry("xgemm", 64, 10), false) == PutOutcome::kAdded);
  CHECK(Database::update(path, dev, make_entry("xgemm", 64, 5), false) ==
        PutOutcome::kKeptExisting);
  CHECK(Database::update(path, dev, make_entry("xgemm", 64, 20), false) == PutOutcome::kReplaced);
  CHECK(Database::update(path, dev, make_entry("xgemm", 64, 3), true) == PutOutcome::kReplaced);
  const auto db = Database::load(path);
  REQUIRE(db.entries().size() == 1);
  CHECK(db.entries().front().gflops == 3);
  CHECK(db.device.name == "Card");
  const std::string before = read_text_file(path);
  const auto why = error_of(
      [&] { Database::update(path, make_device("Other"), make_entry("xgemm", 32, 1), false); });
  CHECK_THAT(why, Catch::Contains("Card") && Catch::Contains("Other"));
  CHECK(read_text_file(path) == before);
}

TEST_CASE("two processes updating one database lose nothing", "[database]") {
  const auto dir = temp_dir("db-concurrent");
  const std::string path = dir + "/shared.json";
  const auto dev = make_device("Card");
  constexpr int kPerWriter = 25;
  std::vector<pid_t> children;
  for (int writer = 0; writer < 2; ++writer) {
    const pid_t pid = ::fork();
    REQUIRE(pid >= 0);
    if (pid == 0) {
      int code = 0;
      try {
        for (int i = 0; i < kPerWriter; ++i) {
          // Different keys per writer, plus one key that both keep improving.
          Database::update(path, dev, make_entry(writer ? "xgemm" : "xgemm_direct", 16 + i, 1.0),
                           false);
          Database::update(path, dev, make_entry("xgemm_fast", 64, 100.0 * writer + i + 1), false);
        }
      } catch (...) {
        code = 1;
      }
      ::_exit(code);
    }
    children.push_back(pid);
  }
  for (pid_t pid : children) {
    int status = 0;
    ::waitpid(pid, &status, 0);
    CHECK(WIFEXITED(status));
    CHECK(WEXITSTATUS(status) == 0);
  }
  const auto db = Database::load(path);
  CHECK(db.entries().size() == 2 * kPerWriter + 1);
  EntryKey shared;
  shared.kernel = "xgemm_fast";
  shared.shape = Shape{64, 64, 64};
  REQUIRE(db.find(shared));
  CHECK(db.find(shared)->gflops == 100.0 + kPerWriter);
}

TEST_CASE("database refuses an entry with a non-finite time", "[database]") {
  Database db;
  auto e = make_entry("xgemm", 64, 0.0);  // a zero rate gives an infinite time
  CHECK_THAT(error_of([&] { db.put(e, false); }), Catch::Contains("non-finite"));
  CHECK(db.entries().empty());
}

TEST_CASE("the batch layout is part of the key, and files without it load as strided",
          "[database]") {
  Problem p;
  p.shape = Shape{32, 32, 32};
  p.batch = 8;
  p.batch_layout = BatchLayout::kOffsets;
  CHECK(EntryKey::of("xgemm", p).batch_layout == BatchLayout::kOffsets);
  CHECK(EntryKey::of("xgemm", p).problem().batch_layout == BatchLayout::kOffsets);
  CHECK_THAT(EntryKey::of("xgemm", p).to_string(), Catch::Contains("b8 offsets 32x32x32"));
  // One GEMM has no layout: whatever was asked, it has a single key.
  p.batch = 1;
  CHECK(EntryKey::of("xgemm", p).batch_layout == BatchLayout::kStrided);
  CHECK(EntryKey::of("xgemm", p).to_string() == "xgemm fp32 row NN b1 32x32x32");

  // The same problem in both layouts: two entries, each found under its own key only.
  Database db;
  auto strided = make_entry("xgemm_direct", 32, 10);
  strided.key.batch = 8;
  auto offsets = strided;
  offsets.key.batch_layout = BatchLayout::kOffsets;
  offsets.gflops = 5;
  REQUIRE(db.put(strided, false) == PutOutcome::kAdded);
  REQUIRE(db.put(offsets, false) == PutOutcome::kAdded);
  CHECK(db.entries().size() == 2);
  CHECK(db.find(strided.key)->gflops == 10);
  CHECK(db.find(offsets.key)->gflops == 5);
  CHECK_FALSE(strided.key.same_family(offsets.key));
  EntryKey near = offsets.key;
  near.shape = Shape{40, 40, 40};
  REQUIRE(db.nearest(near).entry);
  CHECK(db.nearest(near).entry->gflops == 5);

  // Written for batches only (single GEMMs serialise as before), and read back.
  const nlohmann::json j = db.to_json();
  CHECK(j["entries"][0]["key"]["batch_layout"] == "strided");
  CHECK(j["entries"][1]["key"]["batch_layout"] == "offsets");
  CHECK_FALSE(nlohmann::json(make_entry("xgemm", 64, 1).key).contains("batch_layout"));
  const Database back = Database::from_json(j, "db.json");
  CHECK(back.find(offsets.key)->gflops == 5);

  // A file from before the layout was keyed: its batches are strided.
  auto old = j;
  old["entries"].erase(1);
  old["entries"][0]["key"].erase("batch_layout");
  const Database loaded = Database::from_json(old, "old.json");
  REQUIRE(loaded.find(strided.key));
  CHECK_FALSE(loaded.find(offsets.key));

  auto bad = j;
  bad["entries"][1]["key"]["batch_layout"] = "pointers";
  CHECK_THAT(error_of([&] { Database::from_json(bad, "bad.json"); }),
             Catch::Contains("bad.json") && Catch::Contains("entries[1]") &&
                 Catch::Contains("strided or offsets"));
}

TEST_CASE("an entry's optional baseline round-trips and is range-checked", "[database]") {
  Database db;
  auto e = make_entry("xgemm_fast", 512, 900);
  e.baseline = Baseline{1200.5, "clblast"};
  REQUIRE(db.put(e, false) == PutOutcome::kAdded);
  db.put(make_entry("xgemm_fast", 1024, 1000), false);  // one without
  const nlohmann::json j = db.to_json();
  CHECK(j["entries"][0]["baseline"]["gflops"] == 1200.5);  // entries sorted: 512^3 first
  CHECK(j["entries"][0]["baseline"]["by"] == "clblast");
  CHECK_FALSE(j["entries"][1].contains("baseline"));
  const Database back = Database::from_json(j, "db.json");
  REQUIRE(back.find(e.key)->baseline);
  CHECK(back.find(e.key)->baseline->gflops == 1200.5);
  CHECK(back.find(e.key)->baseline->by == "clblast");
  // Files from before the field load as they did: the fixture has none.
  for (const auto& entry : Database::load(source_path(kFixture)).entries()) {
    CHECK_FALSE(entry.baseline);
  }

  // A rate that cannot be a measurement, a missing or mistyped field: one line naming the field.
  for (const auto& [value, why] : std::vector<std::pair<nlohmann::json, std::string>>{
           {{{"gflops", -3.0}, {"by", "clblast"}}, "baseline.gflops"},
           {{{"gflops", 0}, {"by", "clblast"}}, "baseline.gflops"},
           {{{"gflops", 10}, {"by", ""}}, "baseline.by"},
           {{{"gflops", 10}}, "missing field 'by'"},
           {{{"gflops", "fast"}, {"by", "clblast"}}, "baseline.gflops"},
           {nlohmann::json(12.0), "baseline"}}) {
    auto bad = j;
    bad["entries"][0]["baseline"] = value;
    const std::string message = error_of([&] { Database::from_json(bad, "bad.json"); });
    INFO(value.dump());
    CHECK_THAT(message, Catch::Contains("bad.json") && Catch::Contains("entries[0]") &&
                            Catch::Contains(why));
    CHECK(message.find('\n') == std::string::npos);
  }
  // Nor can such an entry be put.
  auto negative = e;
  negative.baseline->gflops = -1;
  CHECK_THAT(error_of([&] { db.put(negative, true); }), Catch::Contains("baseline.gflops"));
}

TEST_CASE("a database refuses figures no measurement has", "[database]") {
  Database db;
  DatabaseEntry e;
  e.key.shape = {64, 64, 64};
  e.gflops = 10;
  e.time.median_ms = 0.05;
  CHECK(db.put(e, false) == PutOutcome::kAdded);
  auto negative = e;
  negative.time.cv = -0.5;
  CHECK_THROWS_WITH(db.put(negative, true), Catch::Contains("time.cv"));
  auto zero = e;
  zero.gflops = 0;
  CHECK_THROWS_WITH(db.put(zero, true), Catch::Contains("gflops"));
  auto timeless = e;
  timeless.time.runs = 5;
  timeless.time.median_ms = 0;
  CHECK_THROWS_WITH(db.put(timeless, true), Catch::Contains("time.median_ms"));
  // A failed entry (a bench that could not re-measure) carries no rate.
  auto failed = zero;
  failed.status = Status::kWrongResult;
  failed.time.median_ms = 0;
  CHECK_NOTHROW(db.put(failed, true));

  nlohmann::json j = db.to_json();
  j["entries"][0]["time"]["max_ms"] = -1.0;
  CHECK_THROWS_WITH(Database::from_json(j, "x.json"),
                    Catch::Contains("x.json") && Catch::Contains("entries[0].time.max_ms"));
}

TEST_CASE("an entry made from a search result keeps the kernel it was given through JSON",
          "[database]") {
  Problem p;
  p.shape = Shape{48, 40, 32};
  Result r;
  r.config = {{"WGD", 16}};
  r.gflops = 12;
  const DatabaseEntry e = DatabaseEntry::from_result("xgemm_direct", p, r, Provenance{});
  CHECK(e.key.kernel == "xgemm_direct");
  const nlohmann::json j = e;
  CHECK(j.at("key").at("kernel") == "xgemm_direct");
  CHECK(j.get<DatabaseEntry>().key == e.key);
}

}  // namespace gemmtune_tests::src_db_test_database
