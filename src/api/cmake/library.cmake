# libgemmtune (src/api): the layer library gemmtune_api, and from it the installed libraries
# gemmtune_shared and gemmtune_static (both libgemmtune), the public headers, the databases, the
# CMake package (find_package(gemmtune) -> gemmtune::gemmtune) and gemmtune.pc.
include(GNUInstallDirs)
include(CMakePackageConfigHelpers)

set(_api_dir ${PROJECT_SOURCE_DIR}/src/api)

# ---- data compiled in: templates, device profiles, checked-in databases ----
# The databases: the device databases at the top of results/ and the tuned.json of its folders,
# each only when it is a gemmtune database (results/ also holds reports and journals).
file(GLOB _templates CONFIGURE_DEPENDS ${PROJECT_SOURCE_DIR}/kernel_templates/*.cl
  ${PROJECT_SOURCE_DIR}/kernel_templates/*.json)
file(GLOB _profiles CONFIGURE_DEPENDS ${PROJECT_SOURCE_DIR}/devices/*.json)
file(GLOB _result_files CONFIGURE_DEPENDS ${PROJECT_SOURCE_DIR}/results/*.json
  ${PROJECT_SOURCE_DIR}/results/*/tuned.json)
set(GEMMTUNE_DATABASE_FILES "")
foreach(f IN LISTS _result_files)
  file(STRINGS ${f} _marker REGEX "\"format\": *\"gemmtune-database\"" LIMIT_COUNT 1)
  if(_marker)
    list(APPEND GEMMTUNE_DATABASE_FILES ${f})
  endif()
endforeach()
set(_embed_list "")
foreach(f IN LISTS _templates)
  get_filename_component(_name ${f} NAME)
  string(APPEND _embed_list "kernel_templates|${_name}|${f}\n")
endforeach()
foreach(f IN LISTS _profiles)
  get_filename_component(_name ${f} NAME)
  string(APPEND _embed_list "devices|${_name}|${f}\n")
endforeach()
foreach(f IN LISTS GEMMTUNE_DATABASE_FILES)
  file(RELATIVE_PATH _name ${PROJECT_SOURCE_DIR}/results ${f})
  string(APPEND _embed_list "databases|${_name}|${f}\n")
endforeach()
set(_embed_list_file ${PROJECT_BINARY_DIR}/api/embedded_files.txt)
set(_embed_cpp ${PROJECT_BINARY_DIR}/api/embedded_files.cpp)
file(GENERATE OUTPUT ${_embed_list_file} CONTENT "${_embed_list}")
add_custom_command(OUTPUT ${_embed_cpp}
  COMMAND ${CMAKE_COMMAND} -DOUTPUT=${_embed_cpp} -DLIST=${_embed_list_file}
    -P ${_api_dir}/cmake/embed_files.cmake
  DEPENDS ${_api_dir}/cmake/embed_files.cmake ${_embed_list_file} ${_templates} ${_profiles}
    ${GEMMTUNE_DATABASE_FILES}
  COMMENT "Embedding kernel templates, device profiles and databases"
  VERBATIM)
target_sources(gemmtune_api PRIVATE ${_embed_cpp})

target_include_directories(gemmtune_api PUBLIC $<BUILD_INTERFACE:${_api_dir}/include>)
# Only the interface is exported from the shared library (gemmtune/export.h).
set_target_properties(gemmtune_api PROPERTIES CXX_VISIBILITY_PRESET hidden
  VISIBILITY_INLINES_HIDDEN ON)
set_source_files_properties(${_api_dir}/choice.cpp PROPERTIES COMPILE_DEFINITIONS
  GEMMTUNE_INSTALL_PREFIX="${CMAKE_INSTALL_PREFIX}")

# ---- the installed libraries ----
# Shared: the interface objects plus, from the layers' archives, only what they use; the
# archives' symbols stay inside (--exclude-libs), so a program's own spdlog, fmt or nlohmann_json
# never meets the library's.
add_library(gemmtune_shared SHARED $<TARGET_OBJECTS:gemmtune_api>)
target_link_libraries(gemmtune_shared PRIVATE gemmtune_eval gemmtune_select)
target_link_libraries(gemmtune_shared PUBLIC OpenCL::OpenCL)
target_link_options(gemmtune_shared PRIVATE -Wl,--exclude-libs,ALL -Wl,--no-undefined
  -Wl,--as-needed)
target_include_directories(gemmtune_shared PUBLIC $<BUILD_INTERFACE:${_api_dir}/include>
  $<INSTALL_INTERFACE:${CMAKE_INSTALL_INCLUDEDIR}>)
set_target_properties(gemmtune_shared PROPERTIES OUTPUT_NAME gemmtune EXPORT_NAME gemmtune
  VERSION ${PROJECT_VERSION} SOVERSION ${PROJECT_VERSION_MAJOR}
  INSTALL_RPATH "")

# Static: every object of the layers it is built on, so that the archive stands alone; a
# program's linker takes only the members it needs.
set(_static_objects "")
foreach(layer IN ITEMS core kernel device db verify eval select api)
  list(APPEND _static_objects $<TARGET_OBJECTS:gemmtune_${layer}>)
endforeach()
add_library(gemmtune_static STATIC ${_static_objects})
target_link_libraries(gemmtune_static PUBLIC OpenCL::OpenCL Threads::Threads)
set(GEMMTUNE_STATIC_ZLIB OFF)
if(ZLIB_FOUND)
  set(GEMMTUNE_STATIC_ZLIB ON)
  target_link_libraries(gemmtune_static PUBLIC ZLIB::ZLIB)
endif()
target_include_directories(gemmtune_static PUBLIC $<BUILD_INTERFACE:${_api_dir}/include>
  $<INSTALL_INTERFACE:${CMAKE_INSTALL_INCLUDEDIR}>)
set_target_properties(gemmtune_static PROPERTIES OUTPUT_NAME gemmtune EXPORT_NAME gemmtune_static)
# The name the brief and the package speak of: the shared library in this build tree.
add_library(gemmtune_lib ALIAS gemmtune_shared)

# ---- install: libraries, headers, databases, CMake package, pkg-config ----
# All in the component gemmtune_library, which `cmake --install --component gemmtune_library`
# installs alone (tests/consumer does, without building the command line).
install(TARGETS gemmtune_shared gemmtune_static EXPORT gemmtuneTargets
  LIBRARY DESTINATION ${CMAKE_INSTALL_LIBDIR} COMPONENT gemmtune_library
  ARCHIVE DESTINATION ${CMAKE_INSTALL_LIBDIR} COMPONENT gemmtune_library
  RUNTIME DESTINATION ${CMAKE_INSTALL_BINDIR} COMPONENT gemmtune_library)
install(DIRECTORY ${_api_dir}/include/gemmtune DESTINATION ${CMAKE_INSTALL_INCLUDEDIR}
  COMPONENT gemmtune_library)
install(FILES ${GEMMTUNE_DATABASE_FILES} DESTINATION ${CMAKE_INSTALL_DATADIR}/gemmtune/databases
  COMPONENT gemmtune_library)
set(_cmake_dir ${CMAKE_INSTALL_LIBDIR}/cmake/gemmtune)
install(EXPORT gemmtuneTargets NAMESPACE gemmtune:: DESTINATION ${_cmake_dir}
  COMPONENT gemmtune_library)
configure_package_config_file(${_api_dir}/cmake/gemmtuneConfig.cmake.in
  ${PROJECT_BINARY_DIR}/api/gemmtuneConfig.cmake INSTALL_DESTINATION ${_cmake_dir})
write_basic_package_version_file(${PROJECT_BINARY_DIR}/api/gemmtuneConfigVersion.cmake
  VERSION ${PROJECT_VERSION} COMPATIBILITY SameMinorVersion)
install(FILES ${PROJECT_BINARY_DIR}/api/gemmtuneConfig.cmake
  ${PROJECT_BINARY_DIR}/api/gemmtuneConfigVersion.cmake DESTINATION ${_cmake_dir}
  COMPONENT gemmtune_library)
# pkg-config: the prefix is found from the .pc file's own place, so the tree may move.
file(RELATIVE_PATH GEMMTUNE_PC_TO_PREFIX ${CMAKE_INSTALL_PREFIX}/${CMAKE_INSTALL_LIBDIR}/pkgconfig
  ${CMAKE_INSTALL_PREFIX})
set(GEMMTUNE_PC_PRIVATE_LIBS "-lpthread")
if(ZLIB_FOUND)
  string(APPEND GEMMTUNE_PC_PRIVATE_LIBS " -lz")
endif()
configure_file(${_api_dir}/cmake/gemmtune.pc.in ${PROJECT_BINARY_DIR}/api/gemmtune.pc @ONLY)
install(FILES ${PROJECT_BINARY_DIR}/api/gemmtune.pc
  DESTINATION ${CMAKE_INSTALL_LIBDIR}/pkgconfig COMPONENT gemmtune_library)
