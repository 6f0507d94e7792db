// SPDX-License-Identifier: Apache-2.0
// GemmCall's second half: the operands placed, padded or aligned, the kernels' arguments bound
// and the call enqueued (compiling and checking the kernel: gemm_call.cpp).
#include <algorithm>
#include <iterator>

#include "src/core/error.hpp"
#include "src/core/int_math.hpp"
#include "src/eval/gemm_call.hpp"
#include "src/eval/gemm_call_internal.hpp"
#include "src/kernel/kernel_source.hpp"

namespace gemmtune {

using namespace gemm_call_args;

namespace {

cl::NDRange to_range(const std::vector<size_t>& v) {
  if (v.size() == 1) return cl::NDRange(v[0]);
  if (v.size() == 2) return cl::NDRange(v[0], v[1]);
  return cl::NDRange(v[0], v[1], v[2]);
}

// cl::Kernel::setArg takes no raw pointers: a caller's cl_mem goes by size and address.
void set_buffer(cl::Kernel& kernel, cl_uint index, cl_mem buffer) {
  kernel.setArg(index, sizeof(cl_mem), &buffer);
}

size_t round_up(size_t x, size_t m) {
  return (x + m - 1) / m * m;
}

}  // namespace

// One operand as the kernel sees it (column-major, after the row-major swap).
struct GemmCall::Operand {
  cl_mem buffer = nullptr;
  int64_t rows = 0, cols = 0;  // stored, column-major
  int64_t offset = 0, ld = 0, stride = 0;
  const std::vector<int64_t>* offsets = nullptr;
  UserBuffer source = UserBuffer::kNone;  // which of the caller's buffers `buffer` is, if any

  // The element after the last one any GEMM of the batch touches, which must fit in an int.
  int64_t extent(int64_t batch) const {
    int64_t first = offset + (batch - 1) * stride;
    if (offsets && !offsets->empty()) {
      first = offset + *std::max_element(offsets->begin(), offsets->end());
    }
    return first + ld * (cols - 1) + rows;
  }
};

cl_mem GemmCall::scratch(Scratch& s, int64_t elements, size_t element_size) {
  const size_t bytes = static_cast<size_t>(std::max<int64_t>(elements, 1)) * element_size;
  if (s.bytes < bytes) {
    s.buffer = cl::Buffer(builder_->context(), CL_MEM_READ_WRITE, bytes);
    s.bytes = bytes;
  }
  return s.buffer();
}

void GemmCall::set_scalar(cl::Kernel& kernel, cl_uint index, double value) const {
  if (problem_.precision == Precision::kFP64) {
    kernel.setArg(index, value);
  } else {
    kernel.setArg(index, static_cast<cl_float>(value));  // real_arg is float for half too
  }
}

// The batch's arguments follow the others, in the kernel view's A, B, C order.
void GemmCall::set_batch(cl::Kernel& kernel, cl_uint first, const Operand& a, const Operand& b,
                         const Operand& c) {
  if (batch_args_ == kStridedBatchArgs) {
    kernel.setArg(first, static_cast<cl_int>(a.stride));
    kernel.setArg(first + 1, static_cast<cl_int>(b.stride));
    kernel.setArg(first + 2, static_cast<cl_int>(c.stride));
  } else if (batch_args_ == kOffsetsBatchArgs) {
    kernel.setArg(first, offsets_);
  }
}

void GemmCall::set_memory(cl::Kernel& kernel, cl_uint index, cl_mem buffer, UserBuffer source) {
  set_buffer(kernel, index, buffer);
  if (source != UserBuffer::kNone) user_args_.push_back(UserArg{kernel, index, source});
}

void GemmCall::add_pad(const Operand& src, const Operand& dst) {
  Step step;
  step.kernel = cl::Kernel(builder_->pad_program(problem_.precision), PadHelper::kEntry);
  cl_uint i = 0;
  for (const Operand* o : {&src, &dst}) {
    for (auto v : {o->rows, o->cols, o->ld, o->offset}) {
      step.kernel.setArg(i++, static_cast<cl_int>(v));
    }
    set_memory(step.kernel, i++, o->buffer, o->source);
  }
  // A work-group copies kLocal * kRows rows of kLocal columns.
  constexpr auto side = static_cast<size_t>(PadHelper::kLocal);
  const int64_t row_groups = ceil_div(dst.rows, PadHelper::kLocal * PadHelper::kRows);
  step.global = cl::NDRange(static_cast<size_t>(row_groups) * side,
                            round_up(static_cast<size_t>(dst.cols), side));
  step.local = cl::NDRange(side, side);
  steps_.push_back(step);
  helpers_ = true;
}

// The template's kernel and, with split-K, its reduction, on the operands as the kernel takes
// them.
void GemmCall::add_kernels(const Operand& ka, const Operand& kb, const Operand& kc,
                           const Operand& bias, cl_mem work, cl_mem counters) {
  const Problem& p = problem_;
  const LaunchGeometry& g = geometry_;
  main_.setArg(0, static_cast<cl_int>(g.m));
  main_.setArg(1, static_cast<cl_int>(g.n));
  // alpha == 0 multiplies nothing of A and B (BLAS lets them hold NaN then): the kernel takes an
  // empty K range. A test of alpha inside the templates' K bounds slowed their loops.
  main_.setArg(2, static_cast<cl_int>(p.alpha == 0 ? 0 : g.k));
  set_scalar(main_, 3, p.alpha);
  set_scalar(main_, 4, p.beta);
  cl_uint i = 5;
  for (const Operand* o : {&ka, &kb, &kc}) {
    set_memory(main_, i++, o->buffer, o->source);
    main_.setArg(i++, static_cast<cl_int>(o->offset));
    main_.setArg(i++, static_cast<cl_int>(o->ld));
  }
  if (contract_args_ >= kContractArgsExtended) {
    set_memory(main_, kBiasArg, bias.buffer, bias.source);
    set_buffer(main_, kWorkArg, work);
  }
  if (contract_args_ == kContractArgsCounters) set_buffer(main_, kCountersArg, counters);
  cl_uint next = contract_args_;
  for (cl_int value : runtime_values_) main_.setArg(next++, value);
  set_batch(main_, next, ka, kb, kc);
  main_step_ = steps_.size();
  steps_.push_back(Step{main_, to_range(g.global), to_range(g.local)});
  if (g.split_k && g.split_k->reduce_launch()) {
    // (M, N, alpha, beta, C, c_offset, ldc, bias, workspace), then the batch's.
    reduce_.setArg(0, static_cast<cl_int>(g.m));
    reduce_.setArg(1, static_cast<cl_int>(g.n));
    set_scalar(reduce_, 2, p.alpha);
    set_scalar(reduce_, 3, p.beta);
    set_memory(reduce_, 4, kc.buffer, kc.source);
    reduce_.setArg(5, static_cast<cl_int>(kc.offset));
    reduce_.setArg(6, static_cast<cl_int>(kc.ld));
    set_memory(reduce_, 7, bias.buffer, bias.source);
    set_buffer(reduce_, 8, work);
    set_batch(reduce_, 9, ka, kb, kc);
    steps_.push_back(
        Step{reduce_, to_range(g.split_k->reduce_global), to_range(g.split_k->reduce_local)});
  }
}

namespace {

// Whether `a` and `b` place the operands alike: everything but the buffers themselves (and
// whether a bias is given).
bool same_placement(const GemmBuffers& a, const GemmBuffers& b) {
  return a.a_offset == b.a_offset && a.b_offset == b.b_offset && a.c_offset == b.c_offset &&
         a.lda == b.lda && a.ldb == b.ldb && a.ldc == b.ldc && a.a_stride == b.a_stride &&
         a.b_stride == b.b_stride && a.c_stride == b.c_stride && a.a_offsets == b.a_offsets &&
         a.b_offsets == b.b_offsets && a.c_offsets == b.c_offsets &&
         (a.bias == nullptr) == (b.bias == nullptr);
}

}  // namespace

// With "align_ld", an operand whose leading dimension or offset is no multiple of it is copied
// into scratch whose leading dimension is, at offset 0 (a read and a write of the operand per
// call; the kernel then takes its wide loads), and the kernel reads the copy.
void GemmCall::align_operand(Operand& o, Scratch& buffer, size_t element_size) {
  const auto ld = static_cast<int64_t>(
      round_up(static_cast<size_t>(o.rows), static_cast<size_t>(geometry_.align_ld)));
  const Operand dst{scratch(buffer, ld * o.cols, element_size), o.rows, o.cols, 0, ld};
  add_pad(o, dst);
  o = dst;
}

cl_mem GemmCall::user_buffer(const GemmBuffers& in, UserBuffer which) {
  switch (which) {
    case UserBuffer::kA:
      return in.a;
    case UserBuffer::kB:
      return in.b;
    case UserBuffer::kC:
      return in.c;
    case UserBuffer::kBias:
      return in.bias;
    default:
      return nullptr;
  }
}

void GemmCall::bind(const GemmBuffers& in, cl::CommandQueue& queue) {
  // The same placement as the last bind (an application calling again on its own buffers): only
  // the caller's buffers are set again. They are set on every call, never assumed unchanged: a
  // released buffer's handle may come back for a new one.
  if (!steps_.empty() && same_placement(in, bound_)) {
    for (UserArg& arg : user_args_) set_buffer(arg.kernel, arg.index, user_buffer(in, arg.source));
    return;
  }
  try {
    bind_placement(in, queue);
  } catch (...) {
    // Half-built steps must neither run nor pass for bound.
    steps_.clear();
    user_args_.clear();
    throw;
  }
  bound_ = in;
}

struct GemmCall::Plan {
  Operand a, b, c;  // the caller's, in the kernel's view
  // The sizes of A and B (as stored) the kernel takes: padded ones with "pad".
  int64_t a_rows = 0, a_cols = 0, b_rows = 0, b_cols = 0;
  bool pad_a = false, pad_b = false;      // "pad": copied into padded scratch
  bool align_a = false, align_b = false;  // "align_ld": copied into aligned scratch
  bool pad_c = false;                     // "pad": C computed in padded scratch and copied back ...
  bool pad_c_in = false;                  // ... after a copy in, where beta != 0 reads it
  bool reduce = false;                    // a split-K reduce kernel after the main one

  // The main kernel and one launch for each of the others.
  size_t launches() const {
    const bool others[] = {pad_a, pad_b, align_a, align_b, pad_c, pad_c_in, reduce};
    return 1 + static_cast<size_t>(std::count(std::begin(others), std::end(others), true));
  }
};

GemmCall::Plan GemmCall::make_plan(const Problem& p, const KernelView& v, const LaunchGeometry& g,
                                   const GemmBuffers& in) {
  const bool row = p.order == Order::kRowMajor;
  // The caller's leading dimensions, dense ones filled in, checked in the caller's terms.
  auto leading = [&](const char* name, int64_t given, int64_t rows, int64_t cols) {
    const int64_t dense = row ? cols : rows;
    if (given == 0) return dense;
    if (given < dense) {
      throw invalid_argument(
          fmt::format("{} = {} is smaller than the {} the matrix needs", name, given, dense));
    }
    return given;
  };
  const Shape& s = p.shape;
  const int64_t lda = leading("lda", in.lda, p.trans_a ? s.k : s.m, p.trans_a ? s.m : s.k);
  const int64_t ldb = leading("ldb", in.ldb, p.trans_b ? s.n : s.k, p.trans_b ? s.k : s.n);
  const int64_t ldc = leading("ldc", in.ldc, s.m, s.n);
  // The kernel's view: a row-major call swaps A and B.
  Operand pa{in.a, v.a_rows(),  v.a_cols(),    in.a_offset,
             lda,  in.a_stride, &in.a_offsets, UserBuffer::kA};
  Operand pb{in.b, v.b_rows(),  v.b_cols(),    in.b_offset,
             ldb,  in.b_stride, &in.b_offsets, UserBuffer::kB};
  if (v.swap_ab) {
    std::swap(pa.buffer, pb.buffer);
    std::swap(pa.offset, pb.offset);
    std::swap(pa.ld, pb.ld);
    std::swap(pa.stride, pb.stride);
    std::swap(pa.offsets, pb.offsets);
    std::swap(pa.source, pb.source);
  }
  Operand pc{in.c, v.m, v.n, in.c_offset, ldc, in.c_stride, &in.c_offsets, UserBuffer::kC};
  for (const Operand* o : {&pa, &pb, &pc}) {
    if (o->extent(p.batch) > kIntMax) {
      throw Error(ErrorCode::kUnsupported,
                  "buffers of more than 2^31 elements exceed the kernels' int indices");
    }
  }
  Plan plan;
  plan.a = pa;
  plan.b = pb;
  plan.c = pc;
  // With "pad", the kernel takes padded sizes, offsets 0 and leading dimensions equal to the
  // padded rows: operands that are not so already go through scratch copies.
  auto padded = [&](const Operand& o, int64_t rows, int64_t cols) {
    return g.padded && !(rows == o.rows && cols == o.cols && o.offset == 0 && o.ld == rows);
  };
  plan.a_rows = v.trans_a ? g.k : g.m;
  plan.a_cols = v.trans_a ? g.m : g.k;
  plan.b_rows = v.trans_b ? g.n : g.k;
  plan.b_cols = v.trans_b ? g.k : g.n;
  plan.pad_a = padded(pa, plan.a_rows, plan.a_cols);
  plan.pad_b = padded(pb, plan.b_rows, plan.b_cols);
  // A batch keeps its operands: the kernel copes with any alignment.
  auto misaligned = [&](const Operand& o) {
    return g.align_ld > 1 && p.batch == 1 && !g.padded &&
           (o.ld % g.align_ld != 0 || o.offset % g.align_ld != 0);
  };
  plan.align_a = misaligned(pa);
  plan.align_b = misaligned(pb);
  plan.pad_c = padded(pc, g.m, g.n);
  plan.pad_c_in = plan.pad_c && p.beta != 0.0;
  plan.reduce = g.split_k && g.split_k->reduce_launch();
  return plan;
}

size_t GemmCall::launches(const KernelSpec& spec, const Configuration& config,
                          const Problem& problem, const GemmBuffers& placement) {
  const KernelView v = kernel_view(problem);
  // Which kernels a call launches does not depend on the device's size: one compute unit stands
  // for any.
  const Context ctx = launch_context(problem.precision, 1);
  return make_plan(problem, v, launch_geometry(spec, config, ctx, v), placement).launches();
}

cl_mem GemmCall::zeroed_counters(int64_t elements, cl::CommandQueue& queue) {
  const size_t before = counters_.bytes;
  cl_mem counters = scratch(counters_, elements, sizeof(cl_int));
  if (counters_.bytes != before) {
    const std::vector<cl_int> zeros(counters_.bytes / sizeof(cl_int), 0);
    queue.enqueueWriteBuffer(counters_.buffer, CL_TRUE, 0, counters_.bytes, zeros.data());
  }
  return counters;
}

void GemmCall::bind_placement(const GemmBuffers& in, cl::CommandQueue& queue) {
  const Problem& p = problem_;
  const LaunchGeometry& g = geometry_;
  if (p.batch > 1 && p.batch_layout == BatchLayout::kOffsets) {
    for (const auto* o : {&in.a_offsets, &in.b_offsets, &in.c_offsets}) {
      if (static_cast<int64_t>(o->size()) != p.batch) {
        throw invalid_argument(
            fmt::format("an offsets batch of {} needs {} offsets per operand", p.batch, p.batch));
      }
    }
  }
  if (p.epilogue.bias && !in.bias) {
    throw invalid_argument("the epilogue '" + to_string(p.epilogue) + "' needs a bias buffer");
  }
  const Plan plan = make_plan(p, view_, g, in);

  steps_.clear();
  user_args_.clear();
  helpers_ = false;
  const auto eb = static_cast<size_t>(element_bytes(p.precision));
  // A padded operand in scratch: padded sizes, offset 0, the padded rows as leading dimension.
  auto padded = [&](const Operand& o, int64_t rows, int64_t cols, Scratch& buffer, bool copy_in) {
    const Operand dst{scratch(buffer, rows * cols, eb), rows, cols, 0, rows};
    if (copy_in) add_pad(o, dst);
    return dst;
  };
  Operand ka = plan.a, kb = plan.b, kc = plan.c;
  if (plan.pad_a) ka = padded(ka, plan.a_rows, plan.a_cols, scratch_a_, true);
  if (plan.pad_b) kb = padded(kb, plan.b_rows, plan.b_cols, scratch_b_, true);
  if (plan.align_a) align_operand(ka, scratch_a_, eb);
  if (plan.align_b) align_operand(kb, scratch_b_, eb);
  if (plan.pad_c) {
    kc = padded(kc, g.m, g.n, scratch_c_, plan.pad_c_in);
    // beta == 0 reads no C: the padded C is then not copied in but filled with NaN, so that a
    // kernel which reads it anyway produces NaN, which verification catches.
    if (!plan.pad_c_in) {
      const auto nan = pack_elements({std::numeric_limits<double>::quiet_NaN()}, p.precision);
      std::vector<unsigned char> fill(scratch_c_.bytes);
      for (size_t i = 0; i + eb <= fill.size(); i += eb) {
        std::copy(nan.begin(), nan.end(), fill.begin() + static_cast<int64_t>(i));
      }
      queue.enqueueWriteBuffer(scratch_c_.buffer, CL_TRUE, 0, fill.size(), fill.data());
    }
  }
  if (batch_args_ == kOffsetsBatchArgs) {
    std::vector<cl_int> offsets;
    for (size_t e = 0; e < static_cast<size_t>(p.batch); ++e) {
      for (const Operand* o : {&ka, &kb, &kc})
        offsets.push_back(static_cast<cl_int>((*o->offsets)[e]));
    }
    offsets_ = cl::Buffer(builder_->context(), CL_MEM_READ_ONLY | CL_MEM_COPY_HOST_PTR,
                          offsets.size() * sizeof(cl_int), offsets.data());
  }

  // The workspace holds partial sums in the arithmetic's type (float for 16acc32).
  const auto work_bytes = static_cast<size_t>(compute_bytes(p.precision));
  const int64_t work_elements =
      g.split_k && g.split_k->workspace_elements > 0 ? g.split_k->workspace_elements * p.batch : 1;
  cl_mem work = scratch(workspace_, work_elements, work_bytes);
  // An in-kernel reduction's counters, one set per batch entry; a kernel that takes the argument
  // without reducing in it gets one counter it never reads.
  const int64_t counters = g.split_k && g.split_k->in_kernel ? g.split_k->counters * p.batch : 1;
  Operand bias;
  bias.buffer = in.bias ? in.bias : scratch(dummy_bias_, 1, eb);
  bias.source = in.bias ? UserBuffer::kBias : UserBuffer::kNone;

  add_kernels(ka, kb, kc, bias, work, zeroed_counters(counters, queue));
  if (plan.pad_c) add_pad(kc, plan.c);
  if (steps_.size() != plan.launches()) {
    throw Error(ErrorCode::kInternal, fmt::format("a GEMM call planned {} launches and bound {}",
                                                  plan.launches(), steps_.size()));
  }
}

void GemmCall::enqueue(cl::CommandQueue& queue, cl::Event* main_event,
                       std::vector<cl::Event>* step_events) const {
  if (steps_.empty()) throw Error(ErrorCode::kInternal, "a GEMM call enqueued before bind()");
  if (step_events) step_events->assign(steps_.size(), cl::Event());
  for (size_t i = 0; i < steps_.size(); ++i) {
    cl::Event* event = step_events ? &(*step_events)[i] : (i == main_step_ ? main_event : nullptr);
    queue.enqueueNDRangeKernel(steps_[i].kernel, cl::NullRange, steps_[i].global, steps_[i].local,
                               nullptr, event);
  }
  if (step_events && main_event) *main_event = (*step_events)[main_step_];
}

}  // namespace gemmtune
