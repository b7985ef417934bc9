#pragma once
// The case a backend is judged on, by the type it computes in (Backend::dtype, SPEC §10 of
// docs/protocol.md, "Judging by dtype"): a backend of dtype T (float32, float16, bfloat16)
// gets every floating input and grad_output rounded to T, and the reference is evaluated on
// exactly those values, so the comparison measures the kernel and not the rounding of its
// inputs; integer index columns (InputSpec::index_column) stay as they are. A backend that
// declares no backward for the op gets the case without grad_output.
#include "core/backend.h"
#include "core/case.h"

namespace oplab::compare {

// True when the backend is held to the per-element bound of SPEC §9 (any dtype but float64).
bool judged_by_bound(const Backend& b, const std::string& op);

// The 8-bit image a uint8 kernel is sent for an input tensor (SPEC §16): kept where every value
// already is an integer in [0, 255] (a case of real pixels); else each value v becomes
// round_half_up(127.5 + 63.75 v) clipped to [0, 255] -- the fuzz values, mostly in (-2, 2),
// spread over the pixel range (rounded as they are they would be 0, 1 and 2).
Tensor quantised_pixels(const Tensor& t);

// Every floating value of the case's inputs and grad_output rounded to t (round to nearest
// even, straight from double); index columns kept.
Case dtype_rounded_case(const Case& c, DType t);

// The case as `b` is sent it and judged on: grad_output dropped when b computes no gradients
// for the op; inputs rounded to its dtype, except for the built-in float32 kernels
// (Backend::is_float32), which round their inputs themselves and whose input rounding the
// flip search accounts for (compare/float_compare.h).
Case case_for(const Backend& b, const Case& c);

}  // namespace oplab::compare
