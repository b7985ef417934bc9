#pragma once
// Which CPU forward the grid_sample glue (grid_sample.cpp) calls for a 4-D input: the
// channels-last path, which copies each block of 16 channels of an image to channels-last
// order before sampling it, or the plain gather (generators/grid_sample_generator.cpp).
// Exposed so that tests can see the choice.
#include <cstdint>

namespace oplab::halide_glue {

// Bytes per input pixel of one channels-last block: 16 channels (an AVX-512 vector, the widest
// natural vector of the CPU targets; narrower ones copy less) of 4 bytes.
constexpr int64_t kGridSampleBlockBytesPerPixel = 64;
// Halide allocates at most 2^31 - 1 bytes at once (targets without large_buffers).
constexpr int64_t kHalideMaxAllocation = (int64_t(1) << 31) - 1;

// True for the channels-last path: its block fits one allocation and the grid samples enough
// positions per input pixel (`positions`, Ho * Wo of one image; `pixels`, H * W) to repay
// copying the block.
bool grid_sample_channels_last(int64_t positions, int64_t pixels);

}  // namespace oplab::halide_glue
