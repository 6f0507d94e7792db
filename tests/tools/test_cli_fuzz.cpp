// SPDX-License-Identifier: Apache-2.0
// Seeded mutations of a database and of a journal, fed to the commands that read them without
// building a kernel: whatever the damage (a field of another type, a field removed, a value at
// the edge of its range, a file cut short or with a byte changed), no command may end with an
// internal error (exit 4) or by a signal. The seed is fixed: every run tries the same files, and
// a failure names the command and the mutations that caused it.
#include <catch2/catch.hpp>

#include <cstdint>
#include <filesystem>
#include <limits>
#include <random>
#include <string>
#include <vector>

#include "src/core/json_util.hpp"
#include "tests/tools/cli_helpers.hpp"

// The file's own namespace: the test files compile in unity batches.
namespace gemmtune_tests::tools_test_cli_fuzz {

using namespace gemmtune;
using test::kDb;
using test::run_gemmtune;
using test::temp_dir;
using test::write_replay;
using test::write_text;

namespace {

using nlohmann::json;

constexpr uint32_t kSeed = 26;
constexpr int kDatabaseCases = 160;
constexpr int kJournalCases = 80;
constexpr int kMostMutationsPerCase = 3;
// The first exit status that means "killed by a signal" (128 + the signal, as the shell says).
constexpr int kSignalled = 128;
constexpr int kInternalError = 4;

// Values of every JSON type, and numbers at the edges of the types fields are read as.
const std::vector<json>& odd_values() {
  static const std::vector<json> values = {5,
                                           -1,
                                           0,
                                           1.5,
                                           -1e300,
                                           1e300,
                                           "x",
                                           "",
                                           true,
                                           false,
                                           nullptr,
                                           json::array(),
                                           json::object(),
                                           json::array({1, "a"}),
                                           "32",
                                           "NN",
                                           4096,
                                           std::numeric_limits<uint64_t>::max(),
                                           std::numeric_limits<int64_t>::min()};
  return values;
}

// Every value in `j` with the pointer that reaches it (the root excluded).
void collect(const json& j, const json::json_pointer& at, std::vector<json::json_pointer>& out) {
  if (j.is_object()) {
    for (const auto& [key, value] : j.items()) {
      out.push_back(at / key);
      collect(value, at / key, out);
    }
  } else if (j.is_array()) {
    for (size_t i = 0; i < j.size(); ++i) {
      out.push_back(at / i);
      collect(j[i], at / i, out);
    }
  }
}

// One change of the JSON `j`, described in `what`.
void mutate_json(json& j, std::mt19937& rng, std::string& what) {
  std::vector<json::json_pointer> nodes;
  collect(j, json::json_pointer(), nodes);
  if (nodes.empty()) return;
  const auto& at = nodes[std::uniform_int_distribution<size_t>(0, nodes.size() - 1)(rng)];
  if (std::uniform_int_distribution<int>(0, 3)(rng) == 0) {
    json& parent = j[at.parent_pointer()];
    if (parent.is_object()) parent.erase(at.back());
    if (parent.is_array()) parent.erase(std::stoul(at.back()));
    what += " erase " + at.to_string() + ";";
    return;
  }
  const auto& values = odd_values();
  const json& v = values[std::uniform_int_distribution<size_t>(0, values.size() - 1)(rng)];
  j[at] = v;
  what += " " + at.to_string() + "=" + v.dump() + ";";
}

// One change of the text: cut short, or one byte replaced by a character that matters to JSON.
void mutate_text(std::string& text, std::mt19937& rng, std::string& what) {
  if (text.empty()) return;
  const size_t at = std::uniform_int_distribution<size_t>(0, text.size() - 1)(rng);
  if (std::uniform_int_distribution<int>(0, 1)(rng) == 0) {
    text.resize(at);
    what += " cut at " + std::to_string(at) + ";";
    return;
  }
  static const std::string kChars = "{}[]\",:0-9ex \n";
  text[at] = kChars[std::uniform_int_distribution<size_t>(0, kChars.size() - 1)(rng)];
  what += " byte " + std::to_string(at) + "='" + std::string(1, text[at]) + "';";
}

// `original` with one to kMostMutationsPerCase changes, mostly of the JSON, at times of the text.
// A JSON-lines file changes one line at a time.
std::string mutated(const std::string& original, bool lines, std::mt19937& rng, std::string& what) {
  std::vector<std::string> parts;
  if (lines) {
    for (size_t start = 0; start < original.size();) {
      const size_t end = original.find('\n', start);
      parts.push_back(original.substr(start, end - start));
      start = end == std::string::npos ? original.size() : end + 1;
    }
  } else {
    parts.push_back(original);
  }
  const int n = std::uniform_int_distribution<int>(1, kMostMutationsPerCase)(rng);
  for (int i = 0; i < n; ++i) {
    const size_t part = std::uniform_int_distribution<size_t>(0, parts.size() - 1)(rng);
    if (lines) what += " line " + std::to_string(part + 1) + ":";
    if (std::uniform_int_distribution<int>(0, 4)(rng) == 0) {
      mutate_text(parts[part], rng, what);
      continue;
    }
    json j = json::parse(parts[part], nullptr, false);
    if (j.is_discarded()) continue;  // already broken by an earlier change
    mutate_json(j, rng, what);
    parts[part] = lines ? j.dump() : j.dump(2);
  }
  std::string out;
  for (const auto& p : parts) out += p + (lines ? "\n" : "");
  return out;
}

void check_no_crash(const std::string& command, const std::string& what) {
  const auto r = run_gemmtune("-q " + command);
  INFO(command);
  INFO("mutations:" << what);
  INFO(r.err);
  CHECK(r.exit_code != kInternalError);
  CHECK(r.exit_code < kSignalled);
}

}  // namespace

TEST_CASE("no mutation of a database makes a command fail internally", "[cli][fuzz][database]") {
  const auto dir = temp_dir("fuzz-database");
  const std::string original = read_text_file(kDb);
  const std::string db = dir + "/db.json";
  const std::vector<std::string> commands = {
      "db show " + db,
      "db lookup " + db + " -m 100 -n 200 -k 300",
      "export " + db + " -f csv",
      "export " + db + " -f clblast-json -o " + dir + "/clblast/",
      "compare " + kDb + " " + db,
      "report " + db,
      "db merge " + dir + "/merged.json " + db,
  };
  std::mt19937 rng(kSeed);
  for (int i = 0; i < kDatabaseCases; ++i) {
    std::string what;
    write_text(db, mutated(original, false, rng, what));
    std::filesystem::remove(dir + "/merged.json");
    check_no_crash(commands[static_cast<size_t>(i) % commands.size()], what);
  }
}

TEST_CASE("no mutation of a journal makes a command fail internally", "[cli][fuzz][journal]") {
  const auto dir = temp_dir("fuzz-journal");
  const std::string replay = write_replay(dir);
  REQUIRE(run_gemmtune("-q search --replay " + replay + " --max-evals 4 --no-db -o " + dir +
                       "/base.json")
              .exit_code == 0);
  const std::string original = read_text_file(dir + "/base.journal.jsonl");
  // The copy resumes beside itself, as a journal moved with its folder does.
  const std::string copy_dir = dir + "/copy";
  const std::string journal = copy_dir + "/base.journal.jsonl";
  const std::vector<std::string> commands = {
      "search --resume " + journal + " --max-evals 5",
      "search --no-db --replay " + journal + " --max-evals 3 -o " + copy_dir + "/replayed.json",
      "db lookup " + kDb + " -m 256 -n 256 -k 256 --journal " + journal,
  };
  std::mt19937 rng(kSeed + 1);
  for (int i = 0; i < kJournalCases; ++i) {
    std::string what;
    std::filesystem::remove_all(copy_dir);
    std::filesystem::create_directories(copy_dir);
    write_text(journal, mutated(original, true, rng, what));
    check_no_crash(commands[static_cast<size_t>(i) % commands.size()], what);
  }
}

}  // namespace gemmtune_tests::tools_test_cli_fuzz
