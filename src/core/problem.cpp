// SPDX-License-Identifier: Apache-2.0
#include "src/core/problem.hpp"

#include <algorithm>
#include <cctype>
#include <fstream>
#include <sstream>

#include <fmt/format.h>

#include "src/core/error.hpp"
#include "src/core/json_reader.hpp"

namespace gemmtune {

double OperandBytes::largest() const {
  return std::max({a, b, c, bias});
}

OperandBytes operand_bytes(const Problem& p) {
  const double e = static_cast<double>(element_bytes(p.precision));
  const double batch = static_cast<double>(p.batch);
  const double m = static_cast<double>(p.shape.m), n = static_cast<double>(p.shape.n),
               k = static_cast<double>(p.shape.k);
  OperandBytes b;
  b.a = batch * m * k * e;
  b.b = batch * k * n * e;
  b.c = batch * m * n * e;
  b.bias = p.epilogue.bias ? n * e : 0;
  return b;
}

void check_fits_device(const Problem& p, uint64_t global_mem_bytes, uint64_t max_alloc_bytes,
                       const std::string& device_name) {
  const auto bytes = operand_bytes(p);
  auto gib = [](double v) { return fmt::format("{:.2f} GiB", v / (1024.0 * 1024.0 * 1024.0)); };
  const std::string what =
      fmt::format("problem {}{} fp{} needs {} for A, {} for B and {} for C", p.shape.to_string(),
                  p.batch > 1 ? fmt::format(" batch {}", p.batch) : std::string(),
                  to_string(p.precision), gib(bytes.a), gib(bytes.b), gib(bytes.c));
  if (global_mem_bytes > 0 && bytes.total() > static_cast<double>(global_mem_bytes)) {
    throw Error(ErrorCode::kUnsupported,
                fmt::format("{} ({} in all), more than the {} of global memory of {}", what,
                            gib(bytes.total()), gib(double(global_mem_bytes)), device_name));
  }
  if (max_alloc_bytes > 0 && bytes.largest() > static_cast<double>(max_alloc_bytes)) {
    throw Error(ErrorCode::kUnsupported,
                fmt::format("{}; {} allocates at most {} in one buffer", what, device_name,
                            gib(double(max_alloc_bytes))));
  }
}

std::string to_string(Precision p) {
  switch (p) {
    case Precision::kFP32:
      return "32";
    case Precision::kFP64:
      return "64";
    case Precision::kFP16:
      return "16";
    case Precision::kFP16Acc32:
      return "16acc32";
  }
  return "32";
}

Precision parse_precision(const std::string& s) {
  if (s == "32" || s == "fp32" || s == "float") return Precision::kFP32;
  if (s == "64" || s == "fp64" || s == "double") return Precision::kFP64;
  if (s == "16" || s == "fp16" || s == "half") return Precision::kFP16;
  if (s == "16acc32") return Precision::kFP16Acc32;
  throw invalid_argument("unknown precision '" + s + "' (expected 32, 16, 16acc32 or 64)");
}

int64_t element_bytes(Precision p) {
  switch (p) {
    case Precision::kFP64:
      return 8;
    case Precision::kFP16:
    case Precision::kFP16Acc32:
      return 2;
    default:
      return 4;
  }
}

int64_t compute_bytes(Precision p) {
  return p == Precision::kFP16Acc32 ? 4 : element_bytes(p);
}

std::string to_string(BatchLayout layout) {
  return layout == BatchLayout::kOffsets ? "offsets" : "strided";
}

BatchLayout parse_batch_layout(const std::string& s) {
  if (s == "strided") return BatchLayout::kStrided;
  if (s == "offsets") return BatchLayout::kOffsets;
  throw invalid_argument("batch layout '" + s + "' must be strided or offsets");
}

std::string to_string(Activation a) {
  switch (a) {
    case Activation::kRelu:
      return "relu";
    case Activation::kGelu:
      return "gelu";
    default:
      return "";
  }
}

Epilogue parse_epilogue(const std::string& spec) {
  Epilogue e;
  if (spec.find_first_not_of(" \t") == std::string::npos) return e;
  std::string activation_item;
  size_t start = 0;
  for (;;) {
    const size_t comma = spec.find(',', start);
    const std::string raw =
        spec.substr(start, comma == std::string::npos ? std::string::npos : comma - start);
    start = comma + 1;
    std::string item;
    for (char c : raw) {
      if (!std::isspace(static_cast<unsigned char>(c))) item += static_cast<char>(std::tolower(c));
    }
    if (item.empty()) throw invalid_argument("epilogue '" + spec + "' has an empty item");
    if (item == "bias") {
      if (e.bias) throw invalid_argument("epilogue '" + spec + "' names 'bias' twice");
      e.bias = true;
    } else if (item == "relu" || item == "gelu") {
      if (e.activation != Activation::kNone) {
        throw invalid_argument("epilogue '" + spec + "' has two activations ('" + activation_item +
                               "' and '" + item + "'); at most one is allowed");
      }
      e.activation = item == "relu" ? Activation::kRelu : Activation::kGelu;
      activation_item = item;
    } else {
      throw invalid_argument("epilogue item '" + item + "' is not bias, relu or gelu");
    }
    if (comma == std::string::npos) break;
  }
  return e;
}

std::string to_string(const Epilogue& e) {
  const std::string act = to_string(e.activation);
  if (!e.bias) return act;
  return act.empty() ? "bias" : "bias," + act;
}

std::string Shape::to_string() const {
  return std::to_string(m) + "x" + std::to_string(n) + "x" + std::to_string(k);
}

Shape parse_shape(const std::string& raw) {
  std::string text;
  for (char c : raw) {
    if (!std::isspace(static_cast<unsigned char>(c))) text += static_cast<char>(std::tolower(c));
  }
  std::vector<int64_t> dims;
  std::string item;
  std::istringstream in(text);
  while (std::getline(in, item, 'x')) {
    if (item.empty() || item.size() > 12 ||
        item.find_first_not_of("0123456789") != std::string::npos) {
      throw invalid_argument("shape '" + raw + "' is not MxNxK with positive integers");
    }
    dims.push_back(std::stoll(item));
  }
  if (!text.empty() && text.back() == 'x') dims.clear();
  if (dims.size() == 1) dims = {dims[0], dims[0], dims[0]};
  if (dims.size() != 3) throw invalid_argument("shape '" + raw + "' is not MxNxK");
  for (auto d : dims) {
    if (d <= 0) throw invalid_argument("shape '" + raw + "' has a dimension that is not positive");
  }
  return Shape{dims[0], dims[1], dims[2]};
}

std::vector<Shape> parse_shape_list(const std::string& text) {
  std::vector<Shape> out;
  std::string item;
  std::istringstream in(text);
  while (std::getline(in, item, ',')) {
    if (item.find_first_not_of(" \t") == std::string::npos) continue;
    out.push_back(parse_shape(item));
  }
  if (out.empty()) throw invalid_argument("no shape given in '" + text + "'");
  return out;
}

std::vector<Shape> read_shapes_file(const std::string& path) {
  std::ifstream in(path);
  if (!in) throw invalid_file(path, "cannot open the shapes file");
  std::vector<Shape> out;
  std::string line;
  int lineno = 0;
  while (std::getline(in, line)) {
    ++lineno;
    if (auto h = line.find('#'); h != std::string::npos) line = line.substr(0, h);
    if (line.find_first_not_of(" \t\r") == std::string::npos) continue;
    try {
      for (const auto& s : parse_shape_list(line)) out.push_back(s);
    } catch (const Error& e) {
      throw invalid_file(path, "line " + std::to_string(lineno) + ": " + e.what());
    }
  }
  if (out.empty()) throw invalid_file(path, "holds no shape");
  return out;
}

std::string Problem::layout() const {
  return std::string(trans_a ? "T" : "N") + (trans_b ? "T" : "N");
}

std::string Problem::order_name() const {
  return order == Order::kRowMajor ? "row" : "col";
}

void set_layout(Problem& p, const std::string& layout) {
  if (layout.size() != 2 || (layout[0] != 'N' && layout[0] != 'T') ||
      (layout[1] != 'N' && layout[1] != 'T')) {
    throw invalid_argument("layout '" + layout + "' must be NN, NT, TN or TT");
  }
  p.trans_a = layout[0] == 'T';
  p.trans_b = layout[1] == 'T';
}

Order parse_order(const std::string& s) {
  if (s == "row" || s == "row-major") return Order::kRowMajor;
  if (s == "col" || s == "column" || s == "col-major") return Order::kColMajor;
  throw invalid_argument("order '" + s + "' must be row or col");
}

void to_json(nlohmann::json& j, const Shape& s) {
  j = {{"m", s.m}, {"n", s.n}, {"k", s.k}};
}
void from_json(const nlohmann::json& j, Shape& s) {
  s.m = j.at("m").get<int64_t>();
  s.n = j.at("n").get<int64_t>();
  s.k = j.at("k").get<int64_t>();
}

void to_json(nlohmann::json& j, const Problem& p) {
  j = {{"shape", p.shape},     {"order", p.order_name()},
       {"layout", p.layout()}, {"alpha", p.alpha},
       {"beta", p.beta},       {"precision", to_string(p.precision)},
       {"batch", p.batch},     {"epilogue", to_string(p.epilogue)}};
  // Written only where it matters, so that single problems serialise as before.
  if (p.batch != 1 || p.batch_layout != BatchLayout::kStrided) {
    j["batch_layout"] = to_string(p.batch_layout);
  }
}

void from_json(const nlohmann::json& j, Problem& p) {
  p.shape = j.at("shape").get<Shape>();
  p.order = parse_order(j.value("order", "row"));
  set_layout(p, j.value("layout", "NN"));
  p.alpha = j.value("alpha", 1.0);
  p.beta = j.value("beta", 0.0);
  p.precision = parse_precision(j.value("precision", "32"));
  p.batch = j.value("batch", int64_t{1});
  if (p.batch < 1) throw invalid_argument("batch " + std::to_string(p.batch) + " is not positive");
  p.batch_layout = parse_batch_layout(j.value("batch_layout", "strided"));
  p.epilogue = parse_epilogue(j.value("epilogue", ""));
}

nlohmann::json problem_json(const Problem& p, const std::string& kernel) {
  nlohmann::json j = p;
  j["kernel"] = kernel;
  return j;
}

std::string kernel_in_problem_json(const nlohmann::json& problem) {
  return JsonReader(problem).string_or("kernel", kDefaultKernel);
}

std::string unmeasurable(const Problem& p) {
  if (p.alpha != 0) return "";
  return "alpha 0 multiplies nothing of A and B (C = beta * C, as BLAS has it): there is no GEMM "
         "rate to measure; measure with a nonzero alpha (a configuration's speed does not depend "
         "on its value)";
}

}  // namespace gemmtune
