// SPDX-License-Identifier: Apache-2.0
// IEEE 754 binary16 conversions for the half storage type, on the host (no F16C assumed).
#include <cmath>
#include <cstring>

#include "gemmtune/gemmtune.hpp"

namespace gemmtune {

half FloatToHalf(float value) {
  uint32_t x = 0;
  std::memcpy(&x, &value, sizeof x);
  const auto sign = static_cast<uint16_t>((x >> 16) & 0x8000u);
  const uint32_t mag = x & 0x7fffffffu;
  half h;
  if (mag >= 0x7f800000u) {  // infinity, or NaN kept quiet with its top payload bits
    h.bits = sign | 0x7c00u | (mag > 0x7f800000u ? 0x200u | ((mag >> 13) & 0x3ffu) : 0u);
    return h;
  }
  if (mag >= 0x477ff000u) {  // rounds to 65520 or more: beyond the largest half
    h.bits = sign | 0x7c00u;
    return h;
  }
  if (mag < 0x38800000u) {    // below 2^-14: a subnormal half, or zero
    if (mag < 0x33000000u) {  // below 2^-25, which rounds to zero
      h.bits = sign;
      return h;
    }
    const uint32_t exponent = mag >> 23;
    const uint32_t mantissa = (mag & 0x7fffffu) | 0x800000u;
    const uint32_t shift = 126 - exponent;  // units of 2^-24
    uint32_t r = mantissa >> shift;
    const uint32_t rest = mantissa & ((1u << shift) - 1);
    const uint32_t halfway = 1u << (shift - 1);
    if (rest > halfway || (rest == halfway && (r & 1u))) ++r;  // to nearest, ties to even
    h.bits = static_cast<uint16_t>(sign | r);
    return h;
  }
  uint32_t r = (mag >> 13) - (112u << 10);  // exponent rebiased from 127 to 15
  const uint32_t rest = mag & 0x1fffu;
  if (rest > 0x1000u || (rest == 0x1000u && (r & 1u))) ++r;  // a carry moves into the exponent
  h.bits = static_cast<uint16_t>(sign | r);
  return h;
}

float HalfToFloat(half value) {
  const uint32_t sign = static_cast<uint32_t>(value.bits & 0x8000u) << 16;
  const uint32_t exponent = (value.bits >> 10) & 0x1fu;
  const uint32_t mantissa = value.bits & 0x3ffu;
  uint32_t x;
  if (exponent == 0) {
    const float f = std::ldexp(static_cast<float>(mantissa), -24);
    return sign ? -f : f;
  }
  if (exponent == 31) {
    x = sign | 0x7f800000u | (mantissa << 13);
  } else {
    x = sign | ((exponent + 112u) << 23) | (mantissa << 13);
  }
  float f;
  std::memcpy(&f, &x, sizeof f);
  return f;
}

}  // namespace gemmtune
