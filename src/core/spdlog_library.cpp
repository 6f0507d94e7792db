// SPDX-License-Identifier: Apache-2.0
// spdlog's compiled part, built once for the whole program, as fmt's is (fmt_library.cpp). Every
// other file is compiled with SPDLOG_COMPILED_LIB and sees declarations only: in header-only mode
// a file that logs took 10.6 s to compile at -O2 against 4.3 s (one call of spdlog::debug and one
// of spdlog::warn, g++ 12), and 50 files log. Debian's libspdlog-dev ships a shared library only,
// and the binaries must need no more than the OpenCL loader at run time.
#ifndef SPDLOG_COMPILED_LIB
#error "spdlog_library.cpp is spdlog's compiled part: build it with SPDLOG_COMPILED_LIB"
#endif

#include <mutex>

// The definitions that header-only mode would include in every file.
#include <spdlog/common-inl.h>
#include <spdlog/details/backtracer-inl.h>
#include <spdlog/details/log_msg-inl.h>
#include <spdlog/details/log_msg_buffer-inl.h>
#include <spdlog/details/null_mutex.h>
#include <spdlog/details/os-inl.h>
#include <spdlog/details/periodic_worker-inl.h>
#include <spdlog/details/registry-inl.h>
#include <spdlog/logger-inl.h>
#include <spdlog/pattern_formatter-inl.h>
#include <spdlog/sinks/ansicolor_sink-inl.h>
#include <spdlog/sinks/base_sink-inl.h>
#include <spdlog/sinks/sink-inl.h>
#include <spdlog/sinks/stdout_color_sinks-inl.h>
#include <spdlog/sinks/stdout_sinks-inl.h>
#include <spdlog/spdlog-inl.h>

// The sink templates that the other files use without their definitions: the base of every
// thread-safe sink (ring buffers included), the plain and the coloured stderr sinks, and the
// factory of the coloured logger (src/core/logging.cpp).
template class spdlog::sinks::base_sink<std::mutex>;
template class spdlog::sinks::base_sink<spdlog::details::null_mutex>;
template class spdlog::sinks::stdout_sink_base<spdlog::details::console_mutex>;
template class spdlog::sinks::stderr_sink<spdlog::details::console_mutex>;
template class spdlog::sinks::ansicolor_sink<spdlog::details::console_mutex>;
template class spdlog::sinks::ansicolor_stderr_sink<spdlog::details::console_mutex>;
template std::shared_ptr<spdlog::logger> spdlog::stderr_color_mt<spdlog::synchronous_factory>(
    const std::string& logger_name, color_mode mode);
