// SPDX-License-Identifier: Apache-2.0
// Where the real CLBlast's definition of an entry point is, for the calls libgemmtune_clblast
// passes on. The library defines CLBlast's GEMM entry points under CLBlast's own names, so the
// real ones are found by the same names in the other objects of the process.
#pragma once

namespace gemmtune::preload {

// The soname of the CLBlast the entry points are taken from (Debian's libclblast1, CLBlast 1.x).
inline constexpr const char* kClblastSoname = "libclblast.so.1";

// The real CLBlast's definition of the function whose definition in this library is at `own`
// (found by the name the dynamic symbol table gives `own`), or null when no CLBlast has it. In
// order: the next definition in the global search order (an application linked with CLBlast); the
// CLBlast library already in the process, by soname and then by file name, which an application
// may have loaded privately (a Python extension module is loaded RTLD_LOCAL, so its CLBlast is
// in no global search order); CLBlast loaded here. Prints one line when none has it.
void* real_definition(const void* own);

template <typename Function>
Function real_function(Function own) {
  return reinterpret_cast<Function>(real_definition(reinterpret_cast<const void*>(own)));
}

}  // namespace gemmtune::preload
