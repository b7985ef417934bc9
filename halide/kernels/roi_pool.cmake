# roi_pool: forward and backward kernels.
oplab_halide_generator(roi_pool.generator generators/roi_pool_generator.cpp)
oplab_halide_kernel(roi_pool_fwd roi_pool.generator roi_pool_forward)
oplab_halide_kernel(roi_pool_bwd roi_pool.generator roi_pool_backward SCATTER)
