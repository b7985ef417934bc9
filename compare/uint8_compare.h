#pragma once
// The uint8 rule of the one judge (SPEC §16; docs/spec.md): a kernel of 8-bit pixels is sent the
// case's feature inputs quantised (compare/dtype_case.h), the double reference runs on exactly
// those pixels, and each output pixel g passes
//   * when it equals the reference r rounded half up and clipped to [0, 255], or
//   * when E > 0 and |g - clip(r)| <= 1/2 + E, E the kernel's stated fixed-point error on the
//     case (Backend::uint8_error): a pixel one off is proven a flip only where r lies within E
//     of the rounding boundary between the two (E = 0: never, not even at an exact tie, which
//     rounds half up);
// and nothing else (a value that is not an integer in [0, 255] is a finding). Where a pixel
// misses, the kernel's named divergences are tried: the reference on their equivalent case,
// held to the same rule, must give every pixel. Where only the clipping of the kernel's 8-bit
// intermediate image (Backend::uint8_clipping) explains a pixel, the verdict is
// precision-exhausted: the rule cannot judge that pixel, and says so.
#include "compare/differential.h"
#include "compare/judge.h"

namespace oplab::compare {

// `subject` (uint8 for the op) against the double `oracle`.
Judgement judge_uint8(Backend& subject, Backend& oracle, const Case& c, const Evaluate& eval);

// The rule on one pair of results: the first pixel that misses ("outputs.output[i]: ..."), or
// empty; `flips` counts the pixels one off within E, `worst` the largest |g - clip(r)|.
std::string uint8_mismatch(const Result& want, const Result& got, double error, int64_t& flips, double& worst);

}  // namespace oplab::compare
