# deform_roi_pool: forward and backward kernels, with and without the offset input.
oplab_halide_generator(deform_roi_pool.generator generators/deform_roi_pool_generator.cpp)
oplab_halide_kernel(deform_roi_pool_fwd deform_roi_pool.generator deform_roi_pool_forward PARAMS has_offset=true)
oplab_halide_kernel(deform_roi_pool_plain_fwd deform_roi_pool.generator deform_roi_pool_forward PARAMS has_offset=false)
oplab_halide_kernel(deform_roi_pool_bwd deform_roi_pool.generator deform_roi_pool_backward SCATTER PARAMS has_offset=true)
oplab_halide_kernel(deform_roi_pool_plain_bwd deform_roi_pool.generator deform_roi_pool_backward SCATTER PARAMS has_offset=false)
# The forward of the MLU design (seed 002): channels-last, float16 storage, float32 arithmetic
# (the float16 backends, halide-*-f16; the generator's half=false, float32 storage, is what the
# bench record's layout comparison times in a driver of its own).
oplab_halide_generator(deform_roi_pool_nhwc.generator generators/deform_roi_pool_nhwc_generator.cpp)
oplab_halide_kernel(deform_roi_pool_nhwc_f16_fwd deform_roi_pool_nhwc.generator deform_roi_pool_nhwc_forward FLOAT16 PARAMS has_offset=true half=true)
oplab_halide_kernel(deform_roi_pool_nhwc_f16_plain_fwd deform_roi_pool_nhwc.generator deform_roi_pool_nhwc_forward FLOAT16 PARAMS has_offset=false half=true)
