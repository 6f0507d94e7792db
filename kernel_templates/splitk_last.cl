// SPDX-License-Identifier: Apache-2.0
// Split-K in one launch (KREDUCE=1 of xgemm_fast and xgemm_skinny): every work-group of an output
// tile writes its part of K to the workspace, and the last of the tile's SPLITK work-groups to
// finish adds all parts into C. A second launch of a reduce kernel costs as much host time as the
// first; this costs each work-group one atomic and the last one the reads of the parts.
//
// The last work-group is found with one int counter per tile: atomic_inc on global memory, core
// since OpenCL 1.1 (no float atomics, nothing of OpenCL 2.0). The last one sets its counter back
// to 0, so that the host zeroes the counters once, when it allocates them, and every call leaves
// them zeroed for the next. No work-group ever waits for another, so the result does not depend
// on which work-groups run at the same time, and nothing can deadlock.
//
// Why the last work-group reads every part, complete:
// - Stores before the count. Each work-item fences its own stores of the parts
//   (GT_RELEASE_WORK_ITEM) before the barrier after which work-item 0 increments the counter,
//   where a fence waits only for the work-item's own stores (a wave's: AMD). Work-item 0 fences
//   after the barrier (GT_RELEASE_DEVICE), the release that the memory model pairs with the
//   atomic that follows it.
// - The count. The counter read SPLITK - 1 before the increment only when the tile's other
//   work-groups have incremented it, each after its stores were complete in device memory.
// - Reads after the count, from device memory. The last work-group's reads must not be served by
//   a cache of its compute unit: the workspace lines at a tile's edge also hold elements of the
//   neighbouring tile, whose last work-group may have read them there before this tile's parts
//   were complete. Work-item 0 fences (GT_ACQUIRE_DEVICE) after the atomic, and on AMD every
//   work-item after the barrier that tells it (GT_ACQUIRE_WORK_ITEM: its wave reads through its
//   own cache, and an RDNA work-group may span both compute units of a work-group processor);
//   the reads then go through GT_PARTS.
// - A fixed order. The last work-group adds the parts in the order 0 .. SPLITK-1, whichever
//   work-group came last, the order of the two-kernel reduction: the same result, bit for bit,
//   from call to call and from either form.
//
// The fences per vendor. OpenCL 1.x's mem_fence(CLK_GLOBAL_MEM_FENCE) orders a work-item's global
// accesses; with it the parts are read through volatile pointers, which the compiler must read
// from memory each time (on NVIDIA ld.volatile, in PTX's memory model a relaxed load at system
// scope, which no stale cache line may serve). AMD's device libraries compile mem_fence to
// a work-group-scope fence, which neither waits for stores to leave the compute unit nor
// invalidates its cache, and a volatile load there waits for the one before it (one s_waitcnt per
// load). So where the compiler targets AMD and has the builtin, the fences are the device-scope
// ("agent") release and acquire of clang's __builtin_amdgcn_fence: the release waits for the
// work-item's stores, the acquire invalidates the compute unit's caches, and plain loads after it
// read device memory at full speed. NVIDIA's compiler turns mem_fence into membar.cta, a fence
// of the work-group's scope only (read in the PTX it built on an H200): no release to another
// work-group. A trial reduction whose work-groups meet in pairs, so that a part is read right
// after its count, read parts before they were visible under it (5 of 426 verified runs wrong;
// results/h200/splitk-fences). Where the device profile declares ptx_fence_gpu (the host adds
// PTX_FENCES=1), work-item 0's fences are PTX's fence.acq_rel.gpu, the reads volatile. PTX's
// fences are cumulative: what the work-group's threads wrote before bar.sync, work-item 0's
// fence orders before its atomic, and what it saw before its acquire, bar.sync passes on (the
// pattern of CUDA's grid-wide synchronization); so no other work-item fences (a fence by every
// work-item too cost that trial 7%: 0.745 of two launches' speed against 0.799). On an NVIDIA
// device without the capability the host refuses KREDUCE=1 (in_kernel_reduction_refusal,
// src/device/device_capabilities.hpp).

#define GT_AMD_FENCES 0
#ifdef __AMDGCN__
#ifdef __has_builtin
#if __has_builtin(__builtin_amdgcn_fence)
#undef GT_AMD_FENCES
#define GT_AMD_FENCES 1
#endif
#endif
#endif

// GT_RELEASE_WORK_ITEM / GT_ACQUIRE_WORK_ITEM: what every work-item does before the barrier that
// precedes the count and after the barrier that tells it; GT_RELEASE_DEVICE / GT_ACQUIRE_DEVICE:
// what work-item 0 does around the atomic.
#if GT_AMD_FENCES
#define GT_RELEASE_WORK_ITEM() __builtin_amdgcn_fence(__ATOMIC_RELEASE, "agent")
#define GT_ACQUIRE_WORK_ITEM() __builtin_amdgcn_fence(__ATOMIC_ACQUIRE, "agent")
#define GT_RELEASE_DEVICE() __builtin_amdgcn_fence(__ATOMIC_RELEASE, "agent")
#define GT_ACQUIRE_DEVICE() __builtin_amdgcn_fence(__ATOMIC_ACQUIRE, "agent")
#define GT_PARTS const __global
#elif PTX_FENCES
#define GT_RELEASE_WORK_ITEM() ((void)0)
#define GT_ACQUIRE_WORK_ITEM() ((void)0)
#define GT_RELEASE_DEVICE() asm volatile("fence.acq_rel.gpu;" ::: "memory")
#define GT_ACQUIRE_DEVICE() asm volatile("fence.acq_rel.gpu;" ::: "memory")
#define GT_PARTS const volatile __global
#else
#define GT_RELEASE_WORK_ITEM() mem_fence(CLK_GLOBAL_MEM_FENCE)
#define GT_ACQUIRE_WORK_ITEM() mem_fence(CLK_GLOBAL_MEM_FENCE)
#define GT_RELEASE_DEVICE() mem_fence(CLK_GLOBAL_MEM_FENCE)
#define GT_ACQUIRE_DEVICE() mem_fence(CLK_GLOBAL_MEM_FENCE)
#define GT_PARTS const volatile __global
#endif

#if KREDUCE
// (Only with KREDUCE: the PTX fences above are no OpenCL C that other compilers parse.)
// Counts the work-group's part of a tile in at `counter`, after the work-group's stores of it;
// returns, to every work-item, whether it was the last of `parts`, in which case every part is
// then readable through GT_PARTS and the counter is 0 again. `last` is the work-group's flag in
// local memory (a kernel declares it: functions cannot). Every work-item of the work-group must
// call it: it holds barriers.
inline int gt_last_part(__global int* counter, __local int* last, const int parts) {
  GT_RELEASE_WORK_ITEM();
  barrier(CLK_GLOBAL_MEM_FENCE | CLK_LOCAL_MEM_FENCE);
  if (get_local_id(0) == 0 && get_local_id(1) == 0 && get_local_id(2) == 0) {
    GT_RELEASE_DEVICE();
    const int is_last = atomic_inc(counter) == parts - 1;
    if (is_last) {
      atomic_xchg(counter, 0);
      GT_ACQUIRE_DEVICE();
    }
    *last = is_last;
  }
  barrier(CLK_LOCAL_MEM_FENCE);
  if (!*last) return 0;
  GT_ACQUIRE_WORK_ITEM();
  return 1;
}
#endif
