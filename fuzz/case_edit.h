#pragma once
// Small tensor and case edits the metamorphic properties are built from.
#include <cstdint>
#include <vector>

#include "core/case.h"

namespace oplab::fuzz {

// Every input and grad_output finite (the algebraic identities need it).
bool all_finite(const Case& c);

// A deterministic second tensor of `shape`: quarter-multiples in [-2, 2] from `salt`, exact in
// binary so that a*x + b*y of them is exact too.
Tensor other_tensor(const Shape& shape, uint64_t salt);

Tensor axpby(double a, const Tensor& x, double b, const Tensor& y);  // a*x + b*y
Tensor abs_of(const Tensor& t);
double dot(const Tensor& a, const Tensor& b);                        // sum of products (long double)

// out[..., perm[i], ...] = t[..., i, ...] along `dim`.
Tensor permute_dim(const Tensor& t, int dim, const std::vector<int64_t>& perm);
// Rotation by one within consecutive blocks: block_of[i] names i's block; blocks are runs of
// equal ids. perm[i] = the next index of the same block, wrapping.
std::vector<int64_t> rotate_within(const std::vector<int64_t>& block_of);
std::vector<int64_t> rotate_all(int64_t n);  // one block

}  // namespace oplab::fuzz
