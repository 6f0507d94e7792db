// SPDX-License-Identifier: Apache-2.0
#include <cstdlib>
#include <fstream>
#include <optional>
#include <regex>
#include <set>
#include <sstream>

#include <fmt/format.h>
#include <catch2/catch.hpp>

#include "src/core/json_util.hpp"
#include "src/db/database.hpp"
#include "src/db/export.hpp"
#include "tests/test_support.hpp"

// The file's own namespace: the test files compile in unity batches.
namespace gemmtune_tests::src_db_test_export {

using namespace gemmtune;
using gemmtune::test::source_path;
using gemmtune::test::temp_dir;

namespace {

// Compiles `main_c` (strict C99) beside the header `h` as tuned.h in `dir` and runs it, its
// standard output going to dir/out.txt; the exit status, or nullopt without a C compiler.
std::optional<int> run_c_program(const std::string& h, const std::string& main_c,
                                 const std::string& dir) {
  if (std::system("cc --version >/dev/null 2>&1") != 0) return std::nullopt;
  std::ofstream(dir + "/tuned.h") << h;
  std::ofstream(dir + "/main.c") << main_c;
  const std::string cmd = "cc -std=c99 -pedantic -Wall -Werror -o " + dir + "/main " + dir +
                          "/main.c 2>" + dir + "/cc.log && " + dir + "/main >" + dir + "/out.txt";
  return std::system(cmd.c_str());
}

Database fixture() {
  return Database::load(source_path("tests/data/db_gfx1012.json"));
}

const DatabaseEntry& entry_of(const Database& db, const std::string& kernel, int64_t m) {
  for (const auto& e : db.entries()) {
    if (e.key.kernel == kernel && e.key.shape.m == m) return e;
  }
  FAIL("no entry " << kernel << " " << m);
  throw std::logic_error("unreachable");
}

std::set<std::string> keys_of(const nlohmann::json& j) {
  std::set<std::string> out;
  for (const auto& [k, v] : j.items()) out.insert(k);
  return out;
}

// The structure of `doc` matches the reference file of CLBlast's tuner: the same fields in the
// same order with the same JSON types, results with the same fields, and the same parameter names.
void check_against_reference(const nlohmann::ordered_json& doc, bool same_parameters) {
  const auto ref = nlohmann::ordered_json::parse(
      read_text_file(source_path("tests/data/clblast_tuner_xgemm_reference.json")));
  std::vector<std::string> ref_fields, doc_fields;
  for (const auto& [k, v] : ref.items()) ref_fields.push_back(k);
  for (const auto& [k, v] : doc.items()) doc_fields.push_back(k);
  CHECK(doc_fields == ref_fields);
  for (const auto& [k, v] : ref.items()) {
    INFO("field " << k);
    REQUIRE(doc.contains(k));
    CHECK(std::string(doc[k].type_name()) == std::string(v.type_name()));
  }
  REQUIRE(doc["results"].is_array());
  REQUIRE(!doc["results"].empty());
  const auto& r0 = ref["results"][0];
  std::set<std::string> ref_params;
  for (const auto& [k, v] : r0["parameters"].items()) ref_params.insert(k);
  for (const auto& r : doc["results"]) {
    std::vector<std::string> rf, df;
    for (const auto& [k, v] : r0.items()) rf.push_back(k);
    for (const auto& [k, v] : r.items()) df.push_back(k);
    CHECK(df == rf);
    CHECK(r["time"].is_number());
    CHECK(r["kernel"] == doc["best_kernel"]);
    std::set<std::string> names;
    for (const auto& [k, v] : r["parameters"].items()) {
      CHECK(v.is_number_integer());
      names.insert(k);
    }
    if (same_parameters) CHECK(names == ref_params);
    // CLBlast's database scripts require PRECISION in every result, equal to the top level.
    CHECK(std::to_string(r["parameters"]["PRECISION"].get<int>()) == doc["precision"]);
  }
  // Numbers written as strings must read back as numbers.
  for (const char* f : {"arg_m", "arg_n", "arg_k", "arg_alpha", "arg_beta", "best_time",
                        "device_core_clock", "device_compute_units"}) {
    INFO(f);
    const std::string s = doc[f];
    char* end = nullptr;
    std::strtod(s.c_str(), &end);
    CHECK(*end == '\0');
  }
  CHECK(std::regex_match(doc["kernel_family"].get<std::string>(), std::regex("[a-z_]+_[0-9]+")));
  // best_parameters lists exactly the first result's parameters as NAME=VALUE.
  std::istringstream in(doc["best_parameters"].get<std::string>());
  std::string token;
  std::set<std::string> listed;
  while (in >> token) {
    const auto eq = token.find('=');
    REQUIRE(eq != std::string::npos);
    const std::string name = token.substr(0, eq);
    listed.insert(name);
    CHECK(std::stoll(token.substr(eq + 1)) == doc["results"][0]["parameters"][name].get<int64_t>());
  }
  CHECK(listed == keys_of(nlohmann::json::parse(doc["results"][0]["parameters"].dump())));
}

}  // namespace

TEST_CASE("xgemm entries map onto CLBlast's Xgemm parameters", "[export]") {
  const auto db = fixture();
  std::string why;
  const auto p = to_clblast(entry_of(db, "xgemm", 1024), &why);
  REQUIRE(p);
  CHECK(p->kernel == "Xgemm");
  CHECK(p->family == "xgemm");
  CHECK(p->precision == "32");
  CHECK(p->precision_enum == "kSingle");
  std::vector<std::string> names;
  for (const auto& [n, v] : p->parameters) names.push_back(n);
  CHECK(names == clblast_parameter_names("Xgemm"));
  CHECK(p->parameters.at("GEMMK") == 0);
  CHECK(p->parameters.at("KREG") == 1);
  CHECK(p->parameters.at("MWG") == 64);
  CHECK(p->parameters.at("VWM") == 4);
  CHECK(p->left_out == std::vector<std::string>{"PADA", "PADB"});
  CHECK(p->added == std::vector<std::string>{"GEMMK=0", "KREG=1"});

  const auto d = to_clblast(entry_of(db, "xgemm_direct", 128), &why);
  REQUIRE(d);
  CHECK(d->kernel == "XgemmDirect");
  CHECK(d->left_out.empty());  // CLBlast's XgemmDirect has PADA and PADB too
  CHECK(d->parameters.size() == clblast_parameter_names("XgemmDirect").size());

  CHECK_FALSE(to_clblast(entry_of(db, "xgemm_fast", 2048), &why));
  CHECK_THAT(why, Catch::Contains("xgemm_fast") && Catch::Contains("no CLBlast equivalent"));
  auto half = entry_of(db, "xgemm", 1024);
  half.key.precision = Precision::kFP16Acc32;
  CHECK_FALSE(to_clblast(half, &why));
  half.key.precision = Precision::kFP16;
  CHECK(to_clblast(half, &why)->precision_enum == "kHalf");
  // A gemmtune xgemm configuration that CLBlast's kernel cannot express is refused.
  auto odd = entry_of(db, "xgemm", 1024);
  odd.parameters["GEMMK"] = 1;
  CHECK_FALSE(to_clblast(odd, &why));
  CHECK_THAT(why, Catch::Contains("GEMMK"));
}

TEST_CASE("clblast-json has the structure of CLBlast's tuner output", "[export]") {
  const auto db = fixture();
  const auto result = export_database(db, ExportFormat::kClblastJson, "db_gfx1012.json");
  // xgemm (two shapes) and xgemm_direct; xgemm_fast is skipped with a note.
  REQUIRE(result.files.size() == 3);
  bool noted_skip = false, noted_pad = false;
  for (const auto& n : result.notes) {
    noted_skip |= n.find("xgemm_fast") != std::string::npos;
    noted_pad |= n.find("PADA, PADB") != std::string::npos;
  }
  CHECK(noted_skip);
  CHECK(noted_pad);
  std::set<std::string> names;
  for (const auto& f : result.files) {
    INFO(f.name);
    names.insert(f.name);
    const auto doc = nlohmann::ordered_json::parse(f.content);
    const bool xgemm = doc["best_kernel"] == "Xgemm";
    check_against_reference(doc, xgemm);
  }
  CHECK(names.size() == 3);  // distinct file names
  const auto doc = nlohmann::ordered_json::parse(result.files.front().content);
  CHECK(doc["kernel_family"] == "xgemm_1");
  CHECK(doc["arg_m"] == "1024");
  CHECK(doc["arg_alpha"] == "1.00");
  CHECK(doc["arg_beta"] == "0.00");
  CHECK(doc["clblast_device_vendor"] == "AMD");
  CHECK(doc["clblast_device_architecture"] == "gfx1012");
  CHECK(doc["device"] == "gfx1012");
  CHECK(doc["device_compute_units"] == "22");
  CHECK(doc["device_core_clock"] == "1845");
  CHECK(doc["device_type"] == "GPU");
  const double ms = 2.0 * 1024 * 1024 * 1024 / 2850.5 / 1e6;
  CHECK(doc["results"][0]["time"].get<double>() == Approx(ms));
  CHECK(doc["best_time"] == fmt::format("{:.2f}", ms));
  CHECK(doc["results"][0]["parameters"]["PRECISION"] == 32);
  CHECK_FALSE(doc["results"][0]["parameters"].contains("PADA"));
}

TEST_CASE("clblast-json names NVIDIA architectures as CLBlast does", "[export]") {
  auto db = fixture();
  DatabaseDevice d;
  d.name = "NVIDIA H200";
  d.vendor = "NVIDIA Corporation";
  d.type = "gpu";
  d.profile = "sm_90";
  d.compute_units = 132;
  d.max_clock_mhz = 1980;
  std::string why;
  const auto& e = entry_of(db, "xgemm", 1024);
  const auto doc = clblast_tuner_json(d, e, *to_clblast(e, &why));
  CHECK(doc["clblast_device_architecture"] == "SM9.0");
  CHECK(doc["clblast_device_vendor"] == "NVIDIA");
  CHECK(doc["device_extra_info"] == "SM9.0");
  check_against_reference(doc, true);
}

TEST_CASE("clblast-override is a call to OverrideParameters per entry", "[export]") {
  const auto db = fixture();
  const auto result = export_database(db, ExportFormat::kClblastOverride, "db_gfx1012.json");
  REQUIRE(result.files.size() == 1);
  const std::string& code = result.files.front().content;
  CHECK_THAT(code, Catch::Contains("#include <clblast.h>"));
  // One function per exportable entry, each installing exactly the CLBlast parameters.
  const std::regex call(
      R"re(gemmtune_override_(\w+)\(cl_device_id device\) \{\s*return clblast::OverrideParameters\(device, "(\w+)", clblast::Precision::(\w+),\s*\{([^;]*)\}\);)re");
  const std::regex pair(R"re(\{"(\w+)", (\d+)\})re");
  int calls = 0;
  for (auto it = std::sregex_iterator(code.begin(), code.end(), call); it != std::sregex_iterator();
       ++it) {
    ++calls;
    const std::string kernel = (*it)[2], precision = (*it)[3], body = (*it)[4];
    CHECK(precision == "kSingle");
    std::map<std::string, int64_t> params;
    for (auto p = std::sregex_iterator(body.begin(), body.end(), pair); p != std::sregex_iterator();
         ++p) {
      params[(*p)[1]] = std::stoll((*p)[2]);
    }
    // The same values as the structured export of the entry the function is named after.
    bool matched = false;
    for (const auto& e : db.entries()) {
      std::string why;
      auto c = to_clblast(e, &why);
      std::string ident =
          e.key.kernel + "_fp32_row_" + e.key.layout + "_b1_" + e.key.shape.to_string();
      for (auto& ch : ident)
        ch = std::isalnum(static_cast<unsigned char>(ch)) ? std::tolower(ch) : '_';
      if (!c || (*it)[1] != ident) continue;
      matched = true;
      CHECK(c->kernel == kernel);
      CHECK(c->parameters == params);
    }
    CHECK(matched);
  }
  CHECK(calls == 3);
  CHECK_THAT(code, Catch::Contains("Left out (no CLBlast equivalent): PADA, PADB"));
  CHECK_THAT(code, Catch::Contains("{\"MWG\", 64}"));
}

TEST_CASE("c-header is a self-contained header that compiles and finds entries", "[export]") {
  const auto db = fixture();
  const auto result = export_database(db, ExportFormat::kCHeader, "db_gfx1012.json");
  REQUIRE(result.files.size() == 1);
  const std::string& h = result.files.front().content;
  CHECK(h.find("#include") == std::string::npos);
  CHECK_THAT(h, Catch::Contains("#define GEMMTUNE_NUM_TUNED 4"));
  CHECK_THAT(h, Catch::Contains("-DKWG=16 -DKWI=2 -DMDIMA=16"));
  // Compile and run a C program that looks entries up, when a C compiler is at hand.
  const auto dir = temp_dir("cheader");
  const auto status = run_c_program(
      h,
      "#include <stdio.h>\n#include \"tuned.h\"\n"
      "int main(void) {\n"
      "  const gemmtune_tuned* t = gemmtune_find(\"xgemm\", \"32\", \"row\", \"NN\", 1, 4096, "
      "4096, 4096);\n"
      "  int i;\n"
      "  if (!t || gemmtune_find(\"xgemm\", \"32\", \"row\", \"NN\", 1, 4096, 4096, 4095)) "
      "return 1;\n"
      "  printf(\"%s %.2f %d\\n\", t->defines, t->gflops, t->num_params);\n"
      "  for (i = 0; i < t->num_params; ++i) printf(\"%s=%lld\\n\", t->params[i].name, "
      "t->params[i].value);\n"
      "  return 0;\n}\n",
      dir);
  if (!status) {
    WARN("no C compiler: the header was checked textually only");
    return;
  }
  REQUIRE(*status == 0);
  const std::string out = read_text_file(dir + "/out.txt");
  CHECK_THAT(out, Catch::StartsWith("-DKWG=32 -DKWI=2 -DMDIMA=16 -DMDIMC=16 -DMWG=128"));
  CHECK_THAT(out, Catch::Contains(" 3900.25 16\n"));
  CHECK_THAT(out, Catch::Contains("\nMWG=128\n"));
  CHECK_THAT(out, Catch::Contains("\nPADA=1\n"));
}

TEST_CASE("csv has one column per parameter and one row per entry", "[export]") {
  const auto db = fixture();
  const auto result = export_database(db, ExportFormat::kCsv, "db_gfx1012.json");
  REQUIRE(result.files.size() == 1);
  std::istringstream in(result.files.front().content);
  std::string header, line;
  std::getline(in, header);
  std::vector<std::string> columns;
  {
    std::istringstream h(header);
    for (std::string c; std::getline(h, c, ',');) columns.push_back(c);
  }
  CHECK(columns[0] == "device");
  CHECK(std::find(columns.begin(), columns.end(), "gflops") != columns.end());
  CHECK(std::find(columns.begin(), columns.end(), "WGD") != columns.end());
  CHECK(std::find(columns.begin(), columns.end(), "SPLITK") != columns.end());
  int rows = 0;
  while (std::getline(in, line)) {
    ++rows;
    std::vector<std::string> cells;
    std::istringstream l(line);
    for (std::string c; std::getline(l, c, ',');) cells.push_back(c);
    if (line.back() == ',') cells.push_back("");
    CHECK(cells.size() == columns.size());
    std::map<std::string, std::string> row;
    for (size_t i = 0; i < columns.size() && i < cells.size(); ++i) row[columns[i]] = cells[i];
    if (row["kernel"] == "xgemm_direct") {
      CHECK(row["WGD"] == "32");
      CHECK(row["MWG"].empty());
      CHECK(std::stod(row["gflops"]) == 310.0);
      CHECK(row["strategy"] == "exhaustive");
    }
  }
  CHECK(rows == 4);
}

TEST_CASE("export format names", "[export]") {
  CHECK(parse_export_format("csv") == ExportFormat::kCsv);
  CHECK(to_string(parse_export_format("clblast-override")) == "clblast-override");
  CHECK_THROWS_WITH(parse_export_format("xml"), Catch::Contains("clblast-json"));
}

TEST_CASE("csv and c-header tell batch layouts and epilogues apart", "[export]") {
  auto db = fixture();
  DatabaseEntry plain = entry_of(db, "xgemm", 4096);
  plain.key.batch = 8;
  plain.gflops = 100;
  DatabaseEntry offsets = plain;
  offsets.key.batch_layout = BatchLayout::kOffsets;
  offsets.gflops = 200;
  DatabaseEntry fused = plain;
  fused.key.epilogue = parse_epilogue("bias,relu");
  fused.gflops = 300;
  for (const auto* e : {&plain, &offsets, &fused}) REQUIRE(db.put(*e, false) == PutOutcome::kAdded);

  const std::string csv = export_database(db, ExportFormat::kCsv, "db.json").files.front().content;
  CHECK_THAT(csv, Catch::StartsWith("device,kernel,precision,order,layout,batch,batch_layout,"
                                    "epilogue,m,n,k,"));
  CHECK_THAT(csv, Catch::Contains(",8,offsets,,4096,"));
  CHECK_THAT(csv, Catch::Contains(",8,strided,\"bias,relu\",4096,"));

  const std::string h =
      export_database(db, ExportFormat::kCHeader, "db.json").files.front().content;
  CHECK_THAT(h,
             Catch::Contains("\"offsets\", \"\"") && Catch::Contains("\"strided\", \"bias,relu\""));
  // gemmtune_find answers the plain strided batch; the other two stay in the table.
  const auto status = run_c_program(
      h,
      "#include \"tuned.h\"\n"
      "int main(void) {\n"
      "  const gemmtune_tuned* t = gemmtune_find(\"xgemm\", \"32\", \"row\", \"NN\", 8, 4096, "
      "4096, 4096);\n"
      "  return t && t->gflops == 100.0 && GEMMTUNE_NUM_TUNED == 7 ? 0 : 1;\n}\n",
      temp_dir("cheader-variants"));
  if (!status) {
    WARN("no C compiler: the header was checked textually only");
    return;
  }
  CHECK(*status == 0);
}

TEST_CASE("c-header and csv carry the register cap an entry was tuned with", "[export][regcap]") {
  const auto profiles = ProfileSet::load_dir(source_path("devices"));
  const CompilerOptions nvidia =
      register_cap_options(source_path("kernel_templates"), profiles.find("sm_90"));
  REQUIRE(nvidia);
  auto db = fixture();
  DatabaseEntry capped = entry_of(db, "xgemm", 4096);
  capped.key.kernel = "xgemm_fast";
  capped.parameters = {{"MWG", 128}, {"NWG", 64}, {"REGCAP", 96}};
  DatabaseEntry uncapped = capped;
  uncapped.key.shape.m = 2048;
  uncapped.parameters["REGCAP"] = 0;
  CHECK(nvidia(capped) == "-cl-nv-maxrregcount=96");
  CHECK(nvidia(uncapped).empty());
  CHECK(nvidia(entry_of(db, "xgemm", 4096)).empty());  // xgemm declares no cap
  // AMD applies a cap as a source attribute: a capped entry exports the define that selects it.
  const CompilerOptions amd =
      register_cap_options(source_path("kernel_templates"), profiles.find("gfx1012"));
  REQUIRE(amd);
  CHECK(amd(capped) == "-DREGCAP_ATTRIBUTE=1");
  CHECK(amd(uncapped).empty());
  // A profile without a cap method, or no profile, gives no options at all.
  CHECK_FALSE(register_cap_options(source_path("kernel_templates"), profiles.find("cpu-generic")));
  CHECK_FALSE(register_cap_options(source_path("kernel_templates"), nullptr));

  Database only;
  only.device = db.device;
  REQUIRE(only.put(capped, false) == PutOutcome::kAdded);
  REQUIRE(only.put(uncapped, false) == PutOutcome::kAdded);
  const std::string h =
      export_database(only, ExportFormat::kCHeader, "db.json", nvidia).files.front().content;
  CHECK_THAT(h, Catch::Contains("-DREGCAP=96 -cl-nv-maxrregcount=96\""));
  CHECK_THAT(h, Catch::Contains("-DREGCAP=0\""));
  const std::string csv =
      export_database(only, ExportFormat::kCsv, "db.json", nvidia).files.front().content;
  CHECK_THAT(csv,
             Catch::Contains(",compiler_options,") && Catch::Contains(",-cl-nv-maxrregcount=96,"));
}

}  // namespace gemmtune_tests::src_db_test_export
