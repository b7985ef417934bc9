#pragma once
// Small helpers the gradient checks share: evaluating a backend on a modified case, tensor
// arithmetic, and telling a float32 backend from a double one by its answers.
#include <string>

#include "core/backend.h"

namespace oplab::gradcheck {

// The output of a forward-only evaluation (grad_output dropped, so no backward runs).
Tensor forward(Backend& b, const Case& c);
// The gradients of <gout, f> for every differentiable input the case supplies.
Result backward(Backend& b, const Case& c, const Tensor& gout);

Case with_input(const Case& c, const std::string& name, Tensor x);
Case without_input(const Case& c, const std::string& name);

double dot(const Tensor& a, const Tensor& b);
double norm2(const Tensor& a);
double max_abs(const Tensor& a);
Tensor abs_of(const Tensor& a);
bool all_finite(const Tensor& t);
// Every input and the grad_output finite: finite differences need it.
bool all_finite(const Case& c);

// The precision a backend computes `op` in (Backend::dtype): F32 stands for every dtype held
// to the per-element bound (float32, float16, bfloat16; compare/dtype_case.h).
enum class Precision { F64, F32 };
Precision precision_of(const Backend& b, const std::string& op);
const char* precision_name(Precision p);

// A float32 backend's disagreement with the reference on this case is a boundary flip: a
// discrete decision (floor, cut-off, rounding, max winner, grid size) that float32 took the
// other way, as the project's float comparison establishes it (compare/float_compare.h). Such a
// case is "explained" (SPEC §9), never a pass.
bool boundary_flip(Backend& ref, Backend& b, const Case& c);

}  // namespace oplab::gradcheck
