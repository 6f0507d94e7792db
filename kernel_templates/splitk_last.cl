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
//   (GT_RELEASE_DEVICE) before the barrier after which work-item 0 increments the counter: a
//   fence waits only for the work-item's own stores (a wave's, on a GPU), so all of them fence.
//   Work-item 0 fences once more after the barrier, the release that the memory model pairs with
//   the atomic that follows it.
// - The count. The counter read SPLITK - 1 before the increment only when the tile's other
//   work-groups have incremented it, each after its stores were complete in device memory.
// - Reads after the count, from device memory. The last work-group's reads must not be served by
//   a cache of its compute unit: the workspace lines at a tile's edge also hold elements of the
//   neighbouring tile, whose last work-group may have read them there before this tile's parts
//   were complete. Work-item 0 fences (GT_ACQUIRE_DEVICE) after the atomic, and every work-item
//   after the barrier that tells it (its wave reads through its own cache: an RDNA work-group may
//   span both compute units of a work-group processor); the reads then go through GT_PARTS.
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
// read device memory at full speed.

#define GT_AMD_FENCES 0
#ifdef __AMDGCN__
#ifdef __has_builtin
#if __has_builtin(__builtin_amdgcn_fence)
#undef GT_AMD_FENCES
#define GT_AMD_FENCES 1
#endif
#endif
#endif

#if GT_AMD_FENCES
#define GT_RELEASE_DEVICE() __builtin_amdgcn_fence(__ATOMIC_RELEASE, "agent")
#define GT_ACQUIRE_DEVICE() __builtin_amdgcn_fence(__ATOMIC_ACQUIRE, "agent")
#define GT_PARTS const __global
#else
#define GT_RELEASE_DEVICE() mem_fence(CLK_GLOBAL_MEM_FENCE)
#define GT_ACQUIRE_DEVICE() mem_fence(CLK_GLOBAL_MEM_FENCE)
#define GT_PARTS const volatile __global
#endif

// Counts the work-group's part of a tile in at `counter`, after the work-group's stores of it;
// returns, to every work-item, whether it was the last of `parts`, in which case every part is
// then readable through GT_PARTS and the counter is 0 again. `last` is the work-group's flag in
// local memory (a kernel declares it: functions cannot). Every work-item of the work-group must
// call it: it holds barriers.
inline int gt_last_part(__global int* counter, __local int* last, const int parts) {
  GT_RELEASE_DEVICE();
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
  GT_ACQUIRE_DEVICE();
  return 1;
}
