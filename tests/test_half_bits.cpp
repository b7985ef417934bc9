// half_bits.h (the float16 storage of the OpenCL kernels on devices without cl_khr_fp16) against
// the compiler's own float16 conversions (_Float16, IEEE round to nearest even): every one of the
// 65536 half values widened, and every 61st float32 bit pattern (all exponents, signs and
// rounding cases: ties, sticky bits, subnormal results, overflow, NaN) narrowed. The expressions
// are compiled here with Halide's JIT, as the generators compile them.
#include <gtest/gtest.h>

#include <cstdint>
#include <cstring>

#include "Halide.h"
#include "half_bits.h"

namespace {

uint32_t bits_of(float f) {
  uint32_t b;
  std::memcpy(&b, &f, 4);
  return b;
}

uint16_t half_of(float f) {
  const _Float16 h = static_cast<_Float16>(f);
  uint16_t b;
  std::memcpy(&b, &h, 2);
  return b;
}

TEST(HalfBits, WidensEveryHalfValueExactly) {
  Halide::Var x;
  Halide::ImageParam in(Halide::UInt(16), 1);
  Halide::Func widen;
  widen(x) = oplab_halide::half_bits_to_float(in(x));
  widen.vectorize(x, 8);
  Halide::Buffer<uint16_t> h(65536);
  for (int i = 0; i < 65536; ++i) h(i) = uint16_t(i);
  in.set(h);
  Halide::Buffer<float> f = widen.realize({65536});
  int wrong = 0;
  for (int i = 0; i < 65536; ++i) {
    _Float16 v;
    const uint16_t b = uint16_t(i);
    std::memcpy(&v, &b, 2);
    const float want = static_cast<float>(v);
    const bool same = want != want ? f(i) != f(i) : bits_of(want) == bits_of(f(i));
    if (!same && ++wrong <= 5) ADD_FAILURE() << "half " << std::hex << i << ": " << bits_of(f(i)) << ", want " << bits_of(want);
  }
  EXPECT_EQ(wrong, 0);
}

TEST(HalfBits, NarrowsAsIeeeRoundToNearestEven) {
  Halide::Var x;
  Halide::ImageParam in(Halide::UInt(32), 1);
  Halide::Func narrow;
  narrow(x) = oplab_halide::float_to_half_bits(Halide::reinterpret<float>(in(x)));
  narrow.vectorize(x, 8).parallel(x, 1 << 16);
  narrow.compile_jit();
  constexpr uint64_t kStride = 61;
  constexpr int kChunk = 1 << 22;
  Halide::Buffer<uint32_t> f(kChunk);
  Halide::Buffer<uint16_t> h(kChunk);
  int wrong = 0;
  uint64_t pattern = 0;
  while (pattern < (uint64_t(1) << 32)) {
    int n = 0;
    for (; n < kChunk && pattern < (uint64_t(1) << 32); ++n, pattern += kStride) f(n) = uint32_t(pattern);
    in.set(f);
    narrow.realize(h);
    for (int i = 0; i < n; ++i) {
      float v;
      const uint32_t b = f(i);
      std::memcpy(&v, &b, 4);
      // A NaN becomes a NaN (which payload is not fixed by IEEE).
      const bool same = v != v ? (h(i) & 0x7c00) == 0x7c00 && (h(i) & 0x3ff) != 0 : h(i) == half_of(v);
      if (!same && ++wrong <= 5)
        ADD_FAILURE() << "float " << std::hex << b << ": " << h(i) << ", want " << half_of(v);
    }
  }
  EXPECT_EQ(wrong, 0);
}

}  // namespace
