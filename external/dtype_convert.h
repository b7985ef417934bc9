#pragma once
// Conversions between double and the element types of include/oplab/plugin.h. Each rounds to
// nearest, ties to even, directly from double (never through float first, which would round
// twice), with the target's subnormals and overflow to infinity; NaN stays NaN, its sign kept.
#include <cstdint>

#include "core/backend.h"

namespace oplab {

double round_to_dtype(double x, DType t);  // the nearest value of type t, as a double

uint16_t double_to_float16_bits(double x);   // IEEE 754 binary16
double float16_bits_to_double(uint16_t bits);
uint16_t double_to_bfloat16_bits(double x);  // the upper half of a float32
double bfloat16_bits_to_double(uint16_t bits);

size_t dtype_size(DType t);  // bytes per element: 8, 4, 2, 2

// n doubles into `dst` as elements of t, and back.
void encode_dtype(const double* src, int64_t n, DType t, void* dst);
void decode_dtype(const void* src, int64_t n, DType t, double* dst);

}  // namespace oplab
