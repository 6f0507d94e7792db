// SPDX-License-Identifier: Apache-2.0
#include "src/bench/suite_internal.hpp"

namespace gemmtune::suite {

namespace {

class CopyCall : public SideCall {
 public:
  CopyCall(ClEnv& env, size_t bytes)
      : env_(env),
        bytes_(bytes),
        from_(env.context(), CL_MEM_READ_WRITE, bytes),
        to_(env.context(), CL_MEM_READ_WRITE, bytes) {
    // Written once, so that the copy reads memory the device has touched, as a GEMM's operands.
    env.queue().enqueueFillBuffer(from_, cl_uchar{0}, 0, bytes);
    env.queue().finish();
  }
  void enqueue(cl::Event* last) override {
    env_.queue().enqueueCopyBuffer(from_, to_, 0, 0, bytes_, nullptr, last);
  }

 private:
  ClEnv& env_;
  size_t bytes_;
  cl::Buffer from_, to_;
};

}  // namespace

std::unique_ptr<SideCall> copy_call(ClEnv& env, double bytes) {
  // Whole 16-byte units, as the operands' vectors.
  constexpr size_t kUnit = 16;
  const size_t half = std::max(kUnit, static_cast<size_t>(bytes / 2) / kUnit * kUnit);
  return std::make_unique<CopyCall>(env, half);
}

}  // namespace gemmtune::suite
