# deform_roi_pool: forward and backward kernels, with and without the offset input.
oplab_halide_generator(deform_roi_pool.generator generators/deform_roi_pool_generator.cpp)
oplab_halide_kernel(deform_roi_pool_fwd deform_roi_pool.generator deform_roi_pool_forward PARAMS has_offset=true)
oplab_halide_kernel(deform_roi_pool_plain_fwd deform_roi_pool.generator deform_roi_pool_forward PARAMS has_offset=false)
oplab_halide_kernel(deform_roi_pool_bwd deform_roi_pool.generator deform_roi_pool_backward PARAMS has_offset=true)
oplab_halide_kernel(deform_roi_pool_plain_bwd deform_roi_pool.generator deform_roi_pool_backward PARAMS has_offset=false)

# The backward's scatter must be a native float atomic add on the GPU (oplab_check_ptx_atomics).
oplab_check_ptx_atomics(deform_roi_pool_bwd deform_roi_pool.generator deform_roi_pool_backward PARAMS has_offset=true)
