// SPDX-License-Identifier: Apache-2.0
// xgemm_direct: one kernel for any size (1x1x1 included), without padding or copies. Tiles that
// cross an edge of M, N or K take a bounds-checked path that reads zeros outside the matrices
// and writes only inside; other tiles take the same unchecked path as xgemm. Both operands are
// always staged in local memory. Parameters keep CLBlast's XgemmDirect meaning; PADA and PADB
// pad the staged rows. The values below are the defaults of xgemm_direct.json.

#ifndef WGD
#define WGD 32  // square work-group tile (M, N) and K-slice
#endif
#ifndef MDIMCD
#define MDIMCD 8  // work-items along M (computing C)
#endif
#ifndef NDIMCD
#define NDIMCD 8  // work-items along N (computing C)
#endif
#ifndef MDIMAD
#define MDIMAD 8  // work-items along M when staging A
#endif
#ifndef NDIMBD
#define NDIMBD 8  // work-items along N when staging B
#endif
#ifndef KWID
#define KWID 2  // unroll factor of the inner K loop
#endif
#ifndef VWMD
#define VWMD 2  // vector width along M
#endif
#ifndef VWND
#define VWND 2  // vector width along N
#endif
#ifndef PADA
#define PADA 1  // extra elements per staged A row
#endif
#ifndef PADB
#define PADB 1  // extra elements per staged B row
#endif

#define MWG WGD
#define NWG WGD
#define KWG WGD
#define MDIMC MDIMCD
#define NDIMC NDIMCD
#define MDIMA MDIMAD
#define NDIMB NDIMBD
#define KWI KWID
#define VWM VWMD
#define VWN VWND
#define STRM 1  // interleaved: neighbouring work-items read neighbouring local vectors
#define STRN 1
#define SA 1
#define SB 1

#define EDGE_CHECKS 1
#define GLOBAL_VECTORS_ALIGNED 0
#define GEMM_ENTRY xgemm_direct

#include "common.cl"
#include "gemm_tile.cl"
