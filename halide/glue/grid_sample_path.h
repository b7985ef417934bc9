#pragma once
// Which CPU kernels the grid_sample glue (grid_sample.cpp) calls: the channels-last ones,
// which copy the input to blocks of 16 channels side by side before sampling it (the 2-D
// forward and grad_grid every block of an image at once, the 5-D forward one block at a
// time), or the plain gathers (generators/grid_sample_generator.cpp,
// grid_sample3d_generator.cpp). Exposed so that tests can see the choice.
#include <cstdint>

namespace oplab::halide_glue {

// Channels per channels-last block: an AVX-512 vector of floats, the widest natural vector of
// the CPU targets (narrower ones copy less), and its bytes per input pixel.
constexpr int64_t kGridSampleBlockChannels = 16;
constexpr int64_t kGridSampleBlockBytesPerPixel = 4 * kGridSampleBlockChannels;
// Halide allocates at most 2^31 - 1 bytes at once (targets without large_buffers).
constexpr int64_t kHalideMaxAllocation = (int64_t(1) << 31) - 1;

// True for the channels-last kernels: the copy of `blocks` blocks of `pixels` pixels (H * W,
// or D * H * W) fits one allocation, and the grid samples enough positions per input pixel
// (`positions`: Ho * Wo, or Do * Ho * Wo, of one image) to repay copying it.
bool grid_sample_channels_last(int64_t positions, int64_t pixels, int64_t blocks);

// The blocks that C channels fill (the last one partly).
constexpr int64_t grid_sample_blocks(int64_t C) { return (C + kGridSampleBlockChannels - 1) / kGridSampleBlockChannels; }

}  // namespace oplab::halide_glue
