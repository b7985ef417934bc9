#pragma once
// NaN and Inf tests on a float32's bits. Outside strict_float, Halide lets LLVM assume that no
// float is NaN or infinite (fast-math flags), and it may then fold is_nan(x) to false: the
// roi_align max backward on the CPU passed a gradient through an all-NaN bin that way (a fuzz
// case with a NaN pixel), while its OpenCL build and the forward kept the test. An integer
// comparison of the bits is never folded.
#include <cstdint>

#include "Halide.h"

namespace oplab_bits {

inline Halide::Expr u32(uint32_t v) { return Halide::Internal::make_const(Halide::UInt(32), uint64_t(v)); }

// The magnitude's bits: above the exponent's all-ones (Inf) is NaN, at or above it not finite.
inline Halide::Expr magnitude_bits(Halide::Expr x) { return Halide::reinterpret<uint32_t>(x) & u32(0x7fffffffu); }
inline Halide::Expr is_nan_bits(Halide::Expr x) { return magnitude_bits(x) > u32(0x7f800000u); }
inline Halide::Expr is_non_finite_bits(Halide::Expr x) { return magnitude_bits(x) >= u32(0x7f800000u); }

}  // namespace oplab_bits
