// SPDX-License-Identifier: Apache-2.0
// The one place that includes the OpenCL C++ bindings, with the project's target version.
#pragma once

#ifndef CL_HPP_TARGET_OPENCL_VERSION
#define CL_HPP_TARGET_OPENCL_VERSION 120
#endif
#ifndef CL_HPP_MINIMUM_OPENCL_VERSION
// 1.1: the bindings then ask the platform's version before calling a 1.2 entry point (device
// retain and release), as Mesa's Clover (OpenCL 1.1) needs.
#define CL_HPP_MINIMUM_OPENCL_VERSION 110
#endif
#ifndef CL_HPP_ENABLE_EXCEPTIONS
#define CL_HPP_ENABLE_EXCEPTIONS
#endif
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wignored-attributes"
#pragma GCC diagnostic ignored "-Wdeprecated-declarations"
#include <CL/opencl.hpp>
#pragma GCC diagnostic pop

#include <string>

namespace gemmtune {
// "CL_OUT_OF_RESOURCES (-5)" for an OpenCL error code.
std::string cl_error_name(int code);
}  // namespace gemmtune
