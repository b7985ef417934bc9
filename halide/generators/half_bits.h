#pragma once
// float16 held as its IEEE bits in a uint16, widened to float32 and rounded back in integer
// arithmetic: for an OpenCL device without cl_khr_fp16 (pocl's CPU device among them), whose
// compiler takes no kernel that names the half type, while the storage stays float16 bit for bit.
// Widening is exact; narrowing rounds to nearest, ties to even, as a float16 conversion does
// (overflow to infinity, NaN kept a quiet NaN, subnormals rounded as such).
#include "Halide.h"
#include "float_bits.h"

namespace oplab_halide {

using oplab_bits::u32;  // a uint32 constant (Halide takes int literals only)

inline Halide::Expr half_bits_to_float(Halide::Expr h) {
  using namespace Halide;
  Expr b = cast<uint32_t>(h);
  Expr sign = (b & u32(0x8000)) << 16, e = (b >> 10) & u32(0x1f), m = b & u32(0x3ff);
  Expr normal = reinterpret<float>(sign | ((e + u32(112)) << 23) | (m << 13));
  Expr special = reinterpret<float>(sign | u32(0x7f800000) | (m << 13));  // infinity, NaN
  // Subnormal (and zero): m * 2^-24, exact in float32; the sign kept for -0.
  Expr tiny = select(sign != u32(0), -1.0f, 1.0f) * (cast<float>(m) * 5.9604644775390625e-08f);
  return select(e == u32(0), tiny, e == u32(31), special, normal);
}

inline Halide::Expr float_to_half_bits(Halide::Expr v) {
  using namespace Halide;
  Expr b = reinterpret<uint32_t>(strict_float(v));
  Expr sign = (b >> 16) & u32(0x8000);
  Expr mag = b & u32(0x7fffffff);
  Expr e = cast<int>(mag >> 23) - 112;  // the half exponent field (1..30 normal)
  Expr m = mag & u32(0x7fffff);
  // Normal: keep 10 mantissa bits, round the 13 dropped ones (a carry into the exponent is
  // right, up to infinity).
  Expr kept = (cast<uint32_t>(max(e, 0)) << 10) | (m >> 13), rest = m & u32(0x1fff);
  Expr normal = kept + select(rest > u32(0x1000) || (rest == u32(0x1000) && (kept & u32(1)) == u32(1)), u32(1), u32(0));
  // Subnormal: the full significand shifted right by 14 - e bits (25 or more: it rounds to 0).
  Expr shift = cast<uint32_t>(clamp(14 - e, 1, 31));
  Expr sig = m | u32(0x800000);
  Expr sub_kept = select(14 - e > 24, u32(0), sig >> shift);
  Expr sub_rest = select(14 - e > 24, u32(0), sig & ((u32(1) << shift) - u32(1))), sub_half = u32(1) << (shift - u32(1));
  Expr subnormal = sub_kept + select(14 - e <= 24 && (sub_rest > sub_half || (sub_rest == sub_half && (sub_kept & u32(1)) == u32(1))), u32(1), u32(0));
  Expr out = select(mag > u32(0x7f800000), u32(0x7e00),  // NaN
                    e >= 31, u32(0x7c00),             // overflow and infinity
                    e >= 1, normal, subnormal);
  return cast<uint16_t>(sign | out);
}

}  // namespace oplab_halide
