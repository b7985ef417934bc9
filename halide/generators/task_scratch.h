#pragma once
// Where the CPU schedules keep the scratch a parallel task makes again at every step of its
// loops: a row's taps and weights, a tile's sums, a query's points.
//
// Halide puts an allocation whose size it cannot prove constant (a row of the grid's width, a
// block of a parameter's channels) on the heap, with a halide_malloc and a halide_free at every
// step: thousands per call (grid_sample's 2-D forward at the standard bench shape made about
// 65 000, 209 MB, per call; ms_deform_attn's backward at the reduced decoder shape 43 000).
// Stored as MemoryType::Stack instead, such an allocation gets one slot per task: on the stack
// while the Func's allocations stay under 16 KiB, else one heap block that each later step
// reuses while it is no larger. Same values, no work per step.
#include "Halide.h"

namespace oplab_scratch {

constexpr Halide::MemoryType kTaskScratch = Halide::MemoryType::Stack;

}  // namespace oplab_scratch
