// SPDX-License-Identifier: Apache-2.0
// What is being computed: a GEMM of one shape, layout, precision and scaling.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

namespace gemmtune {

enum class Precision { kFP32, kFP64, kFP16, kFP16Acc32 };

std::string to_string(Precision p);               // "32", "64", "16", "16acc32"
Precision parse_precision(const std::string& s);  // throws Error on an unknown name
int64_t element_bytes(Precision p);               // storage size of one element
int64_t compute_bytes(Precision p);  // size of one element of the arithmetic (4 for 16acc32)

struct Shape {
  int64_t m = 0, n = 0, k = 0;
  std::string to_string() const;  // "1024x1024x1024"
  bool operator==(const Shape& o) const { return m == o.m && n == o.n && k == o.k; }
  bool operator<(const Shape& o) const { return m != o.m ? m < o.m : n != o.n ? n < o.n : k < o.k; }
};

// "MxNxK" (or a single "N" for N×N×N); dimensions must be positive. Throws Error naming the item.
Shape parse_shape(const std::string& text);
// A comma-separated list of shapes.
std::vector<Shape> parse_shape_list(const std::string& text);
// A file with one shape per line (blank lines and '#' comments ignored).
std::vector<Shape> read_shapes_file(const std::string& path);

enum class Order { kRowMajor, kColMajor };

// Where the matrices of a batched problem lie (batch > 1; ignored for batch 1).
// kStrided: each operand is one buffer holding its matrices a fixed stride apart.
// kOffsets: each operand is one buffer plus an array of per-matrix element offsets. This stands
// in for the pointer-array form of batched BLAS: OpenCL 1.2 cannot pass an array of buffer
// pointers to a kernel, but an array of offsets into one buffer per operand places the matrices
// just as freely.
enum class BatchLayout { kStrided, kOffsets };

std::string to_string(BatchLayout layout);             // "strided", "offsets"
BatchLayout parse_batch_layout(const std::string& s);  // throws Error on an unknown name

// The fused epilogue: C = act(alpha·op(A)·op(B) + beta·C + bias), bias one value per column of
// the user's C (length N, shared by every GEMM of a batch, stored in the storage type).
enum class Activation { kNone, kRelu, kGelu };  // GELU in its tanh form

struct Epilogue {
  bool bias = false;
  Activation activation = Activation::kNone;
  bool none() const { return !bias && activation == Activation::kNone; }
  bool operator==(const Epilogue& o) const { return bias == o.bias && activation == o.activation; }
  bool operator!=(const Epilogue& o) const { return !(*this == o); }
};

std::string to_string(Activation a);  // "", "relu", "gelu"
// "" (none) or comma-separated items bias, relu, gelu in any order, at most one activation.
// Throws Error (invalid argument) naming the bad item.
Epilogue parse_epilogue(const std::string& spec);
// Canonical spelling: "", "bias", "relu", "gelu", "bias,relu", "bias,gelu".
std::string to_string(const Epilogue& e);

// The kernel template that computes a problem is a choice made for it, not part of it: it lives
// with whatever pairs the two (an evaluator, a journal entry, a database key, a compile request).
struct Problem {
  Shape shape;
  Order order = Order::kRowMajor;
  bool trans_a = false;  // C = op(A)·op(B), op = transpose when set
  bool trans_b = false;
  double alpha = 1.0;
  double beta = 0.0;
  Precision precision = Precision::kFP32;
  int64_t batch = 1;  // independent GEMMs of the same shape, computed by one launch
  BatchLayout batch_layout = BatchLayout::kStrided;
  Epilogue epilogue;  // parsed where it enters (command line, JSON), never re-parsed

  // "NN", "NT", "TN", "TT" (op(A), op(B)).
  std::string layout() const;
  // "row" or "col".
  std::string order_name() const;
  double flops() const { return 2.0 * shape.m * shape.n * shape.k * batch; }
};

// Why `p` has no rate to measure, or "": alpha 0 multiplies nothing of A and B (C = beta * C, as
// BLAS has it), so 2MNK flops over its time would be no configuration's rate. The library computes
// such calls; the tuner refuses to time them.
std::string unmeasurable(const Problem& p);

// Bytes of the device buffers a problem needs at least: A, B and C of every GEMM of the batch (one
// buffer per operand) and the bias. In double, so that no shape overflows the arithmetic.
struct OperandBytes {
  double a = 0, b = 0, c = 0, bias = 0;
  double total() const { return a + b + c + bias; }
  double largest() const;
};
OperandBytes operand_bytes(const Problem& p);

// Throws Error(kUnsupported) naming the sizes when `p`'s operands exceed the device's global
// memory or one of them exceeds its largest allocation (0 = unknown, not checked), so that a
// problem the device cannot hold is refused before anything is compiled.
void check_fits_device(const Problem& p, uint64_t global_mem_bytes, uint64_t max_alloc_bytes,
                       const std::string& device_name);

// Sets trans_a / trans_b from "NN", "NT", "TN" or "TT"; throws Error otherwise.
void set_layout(Problem& p, const std::string& layout);
Order parse_order(const std::string& s);

void to_json(nlohmann::json& j, const Shape& s);
void from_json(const nlohmann::json& j, Shape& s);
// The problem's own fields; no "kernel" (see problem_json).
void to_json(nlohmann::json& j, const Problem& p);
void from_json(const nlohmann::json& j, Problem& p);

// Files have always held the kernel inside the problem's object, beside "shape" (journals,
// databases' results, evaluation caches, compile and worker messages), and earlier versions read
// it from there. The owner of the kernel writes it in with problem_json and reads it back with
// kernel_in_problem_json ("xgemm" when absent, as before).
inline constexpr const char* kDefaultKernel = "xgemm";
nlohmann::json problem_json(const Problem& p, const std::string& kernel);
std::string kernel_in_problem_json(const nlohmann::json& problem);

}  // namespace gemmtune
