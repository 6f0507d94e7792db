// SPDX-License-Identifier: Apache-2.0
// xgemm_fast, part 1: the tunables with their defaults, the problem-level options the host sets,
// and the sizes derived from them. Included first by xgemm_fast.cl; every later part reads these.
//
// Every tunable has a default; the host only adds -D defines.

#ifndef TRANSA
#define TRANSA 0  // 1: A is stored K x M (op(A) = A^T)
#endif
#ifndef TRANSB
#define TRANSB 0  // 1: B is stored N x K (op(B) = B^T)
#endif

#ifndef MWG
#define MWG 64  // work-group tile in M
#endif
#ifndef NWG
#define NWG 64  // work-group tile in N
#endif
#ifndef KWG
#define KWG 16  // K tile held in local memory per stage
#endif
#ifndef MDIMC
#define MDIMC 16  // threads along M
#endif
#ifndef NDIMC
#define NDIMC 16  // threads along N
#endif
#ifndef VWM
#define VWM 4  // vector width of the A fragment reads from local memory
#endif
#ifndef VWN
#define VWN 4  // vector width of the B fragment reads from local memory
#endif
#ifndef STRM
#define STRM 1  // 1: a thread's M fragment is VWM-wide chunks at stride MDIMC*VWM; 0: contiguous
#endif
#ifndef STRN
#define STRN 1  // same for N
#endif
#ifndef KWI
#define KWI 4  // unroll factor of the inner K loop
#endif
#ifndef KSL
#define KSL 1  // work-item slices along K: each multiplies KWG/KSL of every K tile of the same tiles
#endif
#ifndef LDS
#define LDS 1  // 1: stage tiles through local memory; 0: read fragments straight from global memory
#endif
#ifndef STAGES
#define STAGES 2  // local-memory buffers: 2 = double buffering, one barrier per K tile; 3, 4: ASYNC
#endif
#ifndef PREFETCH
#define PREFETCH 1  // 1: global loads of tile t+1 are issued before the FMAs of tile t; 2: t+2
#endif
#ifndef PADA
#define PADA 0  // extra elements per local-memory row of A (bank-conflict avoidance)
#endif
#ifndef PADB
#define PADB 0  // same for B
#endif
#ifndef SWZ
#define SWZ 0  // 1: XOR-swizzle the vector chunks of each local-memory row by the row index
#endif
#ifndef BKM
#define BKM 0  // 1: the B tile K-major in local memory (a row of KWG + PADB per column n)
#endif
// GROUPM, the work-groups' rasterization in tile rows, is a runtime parameter (xgemm_fast.json):
// the kernel's argument groupm, so that configurations differing only there share one build,
// except GROUPM 1, built in as a define (no rasterization code).
#ifdef GROUPM
#define GROUPM_ROWS_ARGUED 0
#define GROUPM_ROWS GROUPM
#else
#define GROUPM_ROWS_ARGUED 1
#define GROUPM_ROWS groupm
#endif
#ifndef SPLITK
#define SPLITK 1  // K split across work-groups; partial sums reduced as KREDUCE says
#endif
#ifndef TAIL
#define TAIL 0  // split-K of the tiles past the last multiple of TAIL x the compute units only
#endif
#ifndef KREDUCE
#define KREDUCE 0  // split-K parts added by 0: XgemmFastReduce (a second launch), 1: the last group
#endif
#ifndef DOT2
#define DOT2 0  // 1: half pairs along K accumulated into float (dot2); half storage only
#endif
#ifndef REGCAP
#define REGCAP 0  // registers per work-item the host asked the compiler for (0: its choice)
#endif
#ifndef REGCAP_ATTRIBUTE
#define REGCAP_ATTRIBUTE 0  // 1: REGCAP applies as a source attribute (AMD), not a build option
#endif
#ifndef GLV
#define GLV 1  // elements per global load of the A and B tiles (1, 2 or 4)
#endif
#ifndef GLH
#define GLH 0  // 1: a slot of an operand aligned to GLV / 2 only loads as two half-wide vectors
#endif
#ifndef ASYNC
#define ASYNC 0  // 1: tiles copied from global straight into STAGES local buffers (multistage)
#endif
#ifndef WSP
#define WSP 0  // producer rows: MDIMC * WSP more work-items load the tiles, the others multiply
#endif
#ifndef PTX_NAMED_BARRIERS
#define PTX_NAMED_BARRIERS 0  // 1: PTX bar.sync and bar.arrive (the host, from the device profile)
#endif
#ifndef CP_ASYNC_PTX
#define CP_ASYNC_PTX 0  // 1: the device has PTX cp.async (set by the host from the device profile)
#endif

// Problem-level options set by the host, not tuned.
#ifndef BIAS
#define BIAS 0  // 0: none, 1: bias[m] added per row of the view, 2: bias[n] per column
#endif
#ifndef ACTIVATION
#define ACTIVATION 0  // 0: none, 1: ReLU, 2: GELU (tanh form)
#endif

// Derived values.
#define MWI (MWG / MDIMC)       // outputs per thread in M
#define NWI (NWG / NDIMC)       // outputs per thread in N
#define SLICE_THREADS (MDIMC * NDIMC)  // work-items of one K slice: one per thread tile
#define THREADS (MDIMC * NDIMC * KSL)  // work-items that multiply: every slice loads the tiles
// Work-items that load the tiles: all, or with WSP only the producer rows.
#if WSP
#define LOADERS (MDIMC * WSP)
#else
#define LOADERS THREADS
#endif
#define KWS (KWG / KSL)                // k values of a K tile that one slice multiplies
// The tiles are loaded in GLV-wide pieces along each operand's contiguous dimension, shared by
// all work-items. The constraints make the pieces a multiple of one slice's work-items, so where
// K slices leave some work-items a piece fewer (A_PART), whole slices skip it together.
#define A_PIECES ((MWG * KWG) / GLV)
#define B_PIECES ((NWG * KWG) / GLV)
#define A_SLOTS ((A_PIECES + LOADERS - 1) / LOADERS)  // pieces of A each work-item loads, at most
#define B_SLOTS ((B_PIECES + LOADERS - 1) / LOADERS)
#define A_PART (A_PIECES % LOADERS != 0)
#define B_PART (B_PIECES % LOADERS != 0)
#define A_LOADS (A_SLOTS * GLV)  // elements of the A tile each work-item loads, at most
#define B_LOADS (B_SLOTS * GLV)
#define ASTRIDE (MWG + PADA)  // local-memory row length of A (one row per k)
#define BSTRIDE (NWG + PADB)
// BKM: the B tile keeps the layout B has in global memory (unless TRANSB): one row per column n,
// KWG values of k side by side, so that its loads store and copy whole vectors and its reads take
// BKV values of k at once.
#define BKSTRIDE (KWG + PADB)
#define BKV 4
#if KWI >= 4 * BKV
#define BK_UNROLL 4  // unroll of the BKV-wide steps: KWI values of k, at least one step
#elif KWI >= 2 * BKV
#define BK_UNROLL 2
#else
#define BK_UNROLL 1
#endif
#if BKM
#define B_TILE (NWG * BKSTRIDE)  // elements of one local buffer of B
#else
#define B_TILE (KWG * BSTRIDE)
#endif
// Outputs a work-item of the last work-group adds up at a time (KREDUCE=1): SPLITK loads of each
// in flight, few registers.
#define REDUCE_UNROLL 4
#define MCHUNKS (MWG / VWM)
#define NCHUNKS (NWG / VWN)
