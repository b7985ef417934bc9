#pragma once
// Where some CPU schedules keep the scratch a parallel task makes again at every step of its
// loops: a row's taps and weights, a row's sums, a query's points.
//
// Halide puts an allocation whose size it cannot prove constant (a row of the grid's width, a
// block of a parameter's channels) on the heap, with a halide_malloc and a halide_free at every
// step: thousands per call (grid_sample's 2-D forward at the standard bench shape made about
// 65 000, 209 MB, per call; ms_deform_attn's backward at the reduced decoder shape 43 000).
// Stored as MemoryType::Stack instead, such an allocation gets one slot per task: on the stack
// while the Func's allocations stay under 16 KiB, else one heap block that each later step
// reuses while it is no larger. Same values, no allocation per step.
//
// Used where it measured faster: grid_sample's kernels (2-D and 5-D) and ms_deform_attn's
// backward (tests/test_kernel_scratch.cpp holds them to it). The same change to the RoI ops,
// interpolate, interpolate antialias, deform_conv2d and ms_deform_attn's forward measured
// slower at the reduced bench shapes (roi_align's forward 1.4-1.6x, deform_roi_pool's 1.7x,
// three alternating runs; docs/bench/2026-11-29c-cpu.md), so they keep Halide's heap scratch;
// why the stack slot costs them more was not found.
#include "Halide.h"

namespace oplab_scratch {

constexpr Halide::MemoryType kTaskScratch = Halide::MemoryType::Stack;

}  // namespace oplab_scratch
