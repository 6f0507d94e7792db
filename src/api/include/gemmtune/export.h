// SPDX-License-Identifier: Apache-2.0
/* Marks the functions of libgemmtune's interface: the shared library is built with hidden
   visibility, so that only these are exported and its internals cannot clash with a program's
   own copies of the same third-party code. */
#ifndef GEMMTUNE_EXPORT_H
#define GEMMTUNE_EXPORT_H

#if defined(__GNUC__) || defined(__clang__)
#define GEMMTUNE_EXPORT __attribute__((visibility("default")))
#else
#define GEMMTUNE_EXPORT
#endif

#endif
