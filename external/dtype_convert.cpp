#include "external/dtype_convert.h"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <limits>

namespace oplab {
namespace {

// A binary floating format: p significand bits (the implicit one included), normal exponents
// emin..emax.
struct Format {
  int p, emin, emax;
};
constexpr Format kHalf{11, -14, 15};
constexpr Format kBFloat{8, -126, 127};

// x rounded to the format, ties to even. The quantum (value of the last significand bit) is
// 2^(E - p + 1) for a normal x of exponent E, and the subnormals' fixed quantum below emin;
// scaling by a power of two is exact in double, and nearbyint rounds ties to even in the
// default rounding mode. A result beyond the largest finite value is infinity.
double round_to(double x, Format f) {
  if (!std::isfinite(x) || x == 0) return x;
  const int e = std::max(std::ilogb(x), f.emin);
  const double quantum = std::ldexp(1.0, e - f.p + 1);
  const double r = std::nearbyint(x / quantum) * quantum;
  const double max_finite = std::ldexp(2.0 - std::ldexp(1.0, 1 - f.p), f.emax);
  if (std::fabs(r) > max_finite) return std::copysign(std::numeric_limits<double>::infinity(), x);
  return r;
}

}  // namespace

double round_to_dtype(double x, DType t) {
  switch (t) {
    case DType::Float64: return x;
    case DType::Float32: return double(float(x));  // the hardware conversion rounds to nearest even
    case DType::Float16: return round_to(x, kHalf);
    case DType::BFloat16: return round_to(x, kBFloat);
    case DType::UInt8: return std::isnan(x) ? 0.0 : std::clamp(std::floor(x + 0.5), 0.0, 255.0);  // half up, clipped
  }
  return x;
}

uint16_t double_to_float16_bits(double x) {
  const uint16_t sign = std::signbit(x) ? 0x8000 : 0;
  if (std::isnan(x)) return sign | 0x7e00;
  const double r = std::fabs(round_to(x, kHalf));
  if (std::isinf(r)) return sign | 0x7c00;
  if (r < std::ldexp(1.0, kHalf.emin))  // zero or subnormal: a multiple of 2^-24
    return sign | uint16_t(std::ldexp(r, 24));
  const int e = std::ilogb(r);
  const uint16_t mant = uint16_t(std::ldexp(r, 10 - e) - 1024.0);
  return sign | uint16_t((e + 15) << 10) | mant;
}

double float16_bits_to_double(uint16_t bits) {
  const double sign = (bits & 0x8000) ? -1.0 : 1.0;
  const int exp = (bits >> 10) & 0x1f;
  const int mant = bits & 0x3ff;
  if (exp == 0x1f) return mant ? std::copysign(std::numeric_limits<double>::quiet_NaN(), sign) : sign * INFINITY;
  if (exp == 0) return sign * std::ldexp(double(mant), -24);
  return sign * std::ldexp(double(mant + 1024), exp - 25);
}

uint16_t double_to_bfloat16_bits(double x) {
  if (std::isnan(x)) return std::signbit(x) ? 0xffc0 : 0x7fc0;
  // The rounded value is a float32 whose lower 16 bits are zero (or an infinity).
  const float f = float(round_to(x, kBFloat));
  uint32_t u;
  std::memcpy(&u, &f, sizeof u);
  return uint16_t(u >> 16);
}

double bfloat16_bits_to_double(uint16_t bits) {
  const uint32_t u = uint32_t(bits) << 16;
  float f;
  std::memcpy(&f, &u, sizeof f);
  return double(f);
}

size_t dtype_size(DType t) {
  switch (t) {
    case DType::Float64: return 8;
    case DType::Float32: return 4;
    case DType::Float16:
    case DType::BFloat16: return 2;
    case DType::UInt8: return 1;
  }
  return 8;
}

void encode_dtype(const double* src, int64_t n, DType t, void* dst) {
  for (int64_t i = 0; i < n; ++i) {
    switch (t) {
      case DType::Float64: static_cast<double*>(dst)[i] = src[i]; break;
      case DType::Float32: static_cast<float*>(dst)[i] = float(src[i]); break;
      case DType::Float16: static_cast<uint16_t*>(dst)[i] = double_to_float16_bits(src[i]); break;
      case DType::BFloat16: static_cast<uint16_t*>(dst)[i] = double_to_bfloat16_bits(src[i]); break;
      case DType::UInt8: static_cast<uint8_t*>(dst)[i] = uint8_t(round_to_dtype(src[i], DType::UInt8)); break;
    }
  }
}

void decode_dtype(const void* src, int64_t n, DType t, double* dst) {
  for (int64_t i = 0; i < n; ++i) {
    switch (t) {
      case DType::Float64: dst[i] = static_cast<const double*>(src)[i]; break;
      case DType::Float32: dst[i] = double(static_cast<const float*>(src)[i]); break;
      case DType::Float16: dst[i] = float16_bits_to_double(static_cast<const uint16_t*>(src)[i]); break;
      case DType::BFloat16: dst[i] = bfloat16_bits_to_double(static_cast<const uint16_t*>(src)[i]); break;
      case DType::UInt8: dst[i] = double(static_cast<const uint8_t*>(src)[i]); break;
    }
  }
}

}  // namespace oplab
