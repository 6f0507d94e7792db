// SPDX-License-Identifier: Apache-2.0
// xgemm: the tiled GEMM kernel for sizes that are multiples of the work-group tile. The host pads
// other sizes with the pad_copy helper (declared by "pad" in xgemm.json), so the kernel has no
// edge checks and may use aligned vector accesses. Parameters keep CLBlast's Xgemm meaning
// (GEMMK=0, KREG=1); PADA and PADB are extra (local-memory row padding).
// Every tunable can be overridden with -D; the values below are the defaults of xgemm.json.

#ifndef MWG
#define MWG 64  // work-group tile in M
#endif
#ifndef NWG
#define NWG 64  // work-group tile in N
#endif
#ifndef KWG
#define KWG 32  // K-slice staged per iteration
#endif
#ifndef MDIMC
#define MDIMC 16  // work-items along M (computing C)
#endif
#ifndef NDIMC
#define NDIMC 16  // work-items along N (computing C)
#endif
#ifndef MDIMA
#define MDIMA 16  // work-items along M when staging A
#endif
#ifndef NDIMB
#define NDIMB 16  // work-items along N when staging B
#endif
#ifndef KWI
#define KWI 2  // unroll factor of the inner K loop
#endif
#ifndef VWM
#define VWM 2  // vector width along M
#endif
#ifndef VWN
#define VWN 2  // vector width along N
#endif
#ifndef STRM
#define STRM 0  // 0: a work-item's M vectors are contiguous, 1: interleaved
#endif
#ifndef STRN
#define STRN 0  // same along N
#endif
#ifndef SA
#define SA 1  // stage A in local memory
#endif
#ifndef SB
#define SB 1  // stage B in local memory
#endif
#ifndef PADA
#define PADA 1  // extra elements per staged A row
#endif
#ifndef PADB
#define PADB 1  // extra elements per staged B row
#endif

#define EDGE_CHECKS 0
#define GLOBAL_VECTORS_ALIGNED 1
#define GEMM_ENTRY xgemm

#include "common.cl"
#include "gemm_tile.cl"
