#pragma once
// The widths the CPU schedules block and specialise on, shared by the generators and the glue
// that names the kernel path each call takes (halide/ops_glue.h, KernelPath): one number in one
// place, so that the path a call reports is the path its kernel ran. Free of Halide headers.
namespace oplab_widths {

// Channels per block of the RoI ops (roi_align, roi_pool, deform_roi_pool) and the width of
// their tiles of pixels: images W >= kRoiLanes wide are copied and transposed in tiles of
// kRoiLanes x kRoiLanes (roi_sampling.h), narrower ones a column at a time.
constexpr int kRoiLanes = 16;
// Output channels per block of the position-sensitive ops (ps_roi_blocks.h).
constexpr int kPsLanes = 8;
// The widest natural float vector of the CPU targets (16 with AVX-512, 8 with AVX2): the
// channel block of grid_sample's channels-last forward and the vectors of ms_deform_attn over
// the head dimension are one such vector, so 16 or more fill a vector, and more than 16 make
// several blocks, on every target.
constexpr int kWidestFloatVector = 16;
// Channels per task of grid_sample's grad_input scatter; the 5-D scatter takes blocks of
// kGridNarrowScatterLanes for that many channels or fewer.
constexpr int kGridScatterLanes = 8;
constexpr int kGridNarrowScatterLanes = 4;
// Output bins of one roi and channel that roi_pool's forward stores 16 at a time (else 8).
constexpr int kRoiPoolWideBins = 16;

// Outputs per band of interpolate antialias's CPU W pass: the outputs of one vector, which
// read the same span of inputs (interpolate_antialias_generator.cpp).
constexpr int kAntialiasBand = 16;

}  // namespace oplab_widths
