#pragma once
// Central finite differences of a forward against a backward, kink-aware.
//
// Along a line x + t*u every op here is a polynomial of degree <= 2 in t between kinks (the
// bilinear blend is bilinear in the two coordinates, and each coordinate moves linearly), so a
// central difference that stays inside one piece is exact up to rounding. Cubic pieces
// (grid_sample's bicubic, OpKinks::piece_degree) take a step 2^8 times smaller. The step is
// therefore chosen large (base_step) and only limited by the kinks: h = min(h0, clearance / 2). When the point sits on a kink, or so close
// that h would drop below h0 / 1024, the point is moved (the whole input by a small random
// jitter for a projection, the element alone for a Jacobian column) and the move is counted;
// when no move clears the kinks, the check is skipped and counted. Nothing is dropped silently.
#include <optional>
#include <vector>

#include "gradcheck/context.h"
#include "gradcheck/kinks.h"

namespace oplab::gradcheck {

// h0 for one input: max(1, max|x|) where the forward is affine in it (central differences are
// exact at any step there, and a large step shrinks the rounding), 2^-8 of that otherwise
// (small enough that moves off a kink stay local; kinks limit it further).
double base_step(const Case& c, const std::string& input);
// The reach leaves room for a usable step around the point.
bool usable(const KinkReach& r, double h0);

// One random projection v^T J u. Error: |fd - an| / Σ|g_i u_i|; tolerance: 1e-8 (double;
// 1e-3 for a float32 backend) plus the rounding of the differences relative to the same. A
// float32 backend's gradient elements carry float32 error up to B_i of SPEC §9, so where that
// tolerance is not met, Σ|u_i| B_i is added to its allowance (fd.cpp).
CheckRecord fd_projection(const CheckContext& ctx, const Case& c, const std::string& input, int which);

// The backend's analytic Jacobian rows on a case: backward(e_j) for every output element j.
std::vector<Result> analytic_rows(Backend& b, const Case& c);

// The full Jacobian of one input. Error per element: |fd - an| / (|an| + max|J|), tolerance as
// for a projection; the record reports the element nearest to (or furthest past) its tolerance.
// `rows` may hold analytic_rows of c (shared by the inputs of one case); it is recomputed
// when elements had to be moved.
CheckRecord fd_jacobian(const CheckContext& ctx, const Case& c, const std::string& input,
                        const std::vector<Result>* rows);

double fd_tolerance(Precision p);

}  // namespace oplab::gradcheck
