# SPDX-License-Identifier: Apache-2.0
# libgemmtune_clblast (src/preload): CLBlast's GEMM entry points over libgemmtune, for
# LD_PRELOAD into an application built against CLBlast. Needs CLBlast's headers (Debian:
# libclblast-dev) for the exact signatures; CLBlast itself is found at run time, in the process.
option(GEMMTUNE_CLBLAST_PRELOAD "Build libgemmtune_clblast, CLBlast's GEMM entry points over libgemmtune" ON)
find_path(GEMMTUNE_CLBLAST_HEADER_DIR NAMES clblast_c.h)
if(GEMMTUNE_CLBLAST_PRELOAD AND GEMMTUNE_CLBLAST_HEADER_DIR AND
   EXISTS ${GEMMTUNE_CLBLAST_HEADER_DIR}/clblast.h)
  set(_preload_dir ${PROJECT_SOURCE_DIR}/src/preload)
  add_library(gemmtune_clblast_preload SHARED ${_preload_dir}/clblast_entry_points.cpp
    ${_preload_dir}/dispatch.cpp ${_preload_dir}/real_clblast.cpp)
  target_include_directories(gemmtune_clblast_preload PRIVATE ${PROJECT_SOURCE_DIR})
  target_include_directories(gemmtune_clblast_preload SYSTEM PRIVATE
    ${GEMMTUNE_CLBLAST_HEADER_DIR})
  target_compile_options(gemmtune_clblast_preload PRIVATE ${GEMMTUNE_COMMON_WARNINGS})
  # CLBlast's headers include the OpenCL headers, which gemmtune uses at 1.2.
  target_compile_definitions(gemmtune_clblast_preload PRIVATE CL_TARGET_OPENCL_VERSION=120)
  # Only CLBlast's entry points are exported (visible in clblast_entry_points.cpp, and the only
  # names exports.map lets out); libgemmtune is found beside this library, where both install.
  set_target_properties(gemmtune_clblast_preload PROPERTIES OUTPUT_NAME gemmtune_clblast
    CXX_VISIBILITY_PRESET hidden VISIBILITY_INLINES_HIDDEN ON UNITY_BUILD OFF
    INSTALL_RPATH "$ORIGIN")
  target_link_libraries(gemmtune_clblast_preload PRIVATE gemmtune_shared ${CMAKE_DL_LIBS})
  target_link_options(gemmtune_clblast_preload PRIVATE -Wl,--no-undefined -Wl,--as-needed
    -Wl,--version-script=${_preload_dir}/exports.map)
  set_target_properties(gemmtune_clblast_preload PROPERTIES LINK_DEPENDS
    ${_preload_dir}/exports.map)
  install(TARGETS gemmtune_clblast_preload LIBRARY DESTINATION ${CMAKE_INSTALL_LIBDIR}
    COMPONENT gemmtune_library)
  if(GEMMTUNE_BUILD_TESTS)
    enable_testing()
    add_subdirectory(tests/preload)
  endif()
elseif(GEMMTUNE_CLBLAST_PRELOAD)
  message(STATUS "gemmtune: CLBlast's headers not found; libgemmtune_clblast is not built")
endif()
