# ps_roi_pool: forward (channel blocks, or bins read in place) and backward kernels.
oplab_halide_generator(ps_roi_pool.generator generators/ps_roi_pool_generator.cpp)
oplab_halide_kernel(ps_roi_pool_fwd ps_roi_pool.generator ps_roi_pool_forward)
oplab_halide_kernel(ps_roi_pool_fwd_in_place ps_roi_pool.generator ps_roi_pool_forward_in_place)
oplab_halide_kernel(ps_roi_pool_bwd ps_roi_pool.generator ps_roi_pool_backward SCATTER)
