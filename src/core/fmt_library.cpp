// SPDX-License-Identifier: Apache-2.0
// fmt's compiled part, built once for the whole program. Every other file sees only fmt's
// declarations (no FMT_HEADER_ONLY): header-only fmt made each file optimise the same formatting
// code again, about 6 of the 14 s that a typical file of this project took to compile. Debian's
// libfmt-dev ships a shared library only, and the binaries must need no more than the OpenCL
// loader at run time, hence this file instead of linking libfmt.
#include <fmt/format-inl.h>

FMT_BEGIN_NAMESPACE
namespace detail {

// The instantiations that fmt's headers declare extern and the formatting of float and double.
template FMT_API auto dragonbox::to_decimal(float x) noexcept -> dragonbox::decimal_fp<float>;
template FMT_API auto dragonbox::to_decimal(double x) noexcept -> dragonbox::decimal_fp<double>;
template FMT_API locale_ref::locale_ref(const std::locale& loc);
template FMT_API auto locale_ref::get<std::locale>() const -> std::locale;
template FMT_API auto thousands_sep_impl(locale_ref) -> thousands_sep_result<char>;
template FMT_API auto decimal_point_impl(locale_ref) -> char;
template FMT_API auto thousands_sep_impl(locale_ref) -> thousands_sep_result<wchar_t>;
template FMT_API auto decimal_point_impl(locale_ref) -> wchar_t;
template FMT_API void buffer<char>::append(const char*, const char*);
template FMT_API void vformat_to(buffer<char>&, string_view,
                                 basic_format_args<FMT_BUFFER_CONTEXT(char)>, locale_ref);

}  // namespace detail
FMT_END_NAMESPACE
