# roi_align: forward (avg, max) and backward kernels.
oplab_halide_generator(roi_align.generator generators/roi_align_generator.cpp)
oplab_halide_kernel(roi_align_avg_fwd roi_align.generator roi_align_forward PARAMS max_mode=false)
oplab_halide_kernel(roi_align_max_fwd roi_align.generator roi_align_forward PARAMS max_mode=true)
oplab_halide_kernel(roi_align_avg_bwd roi_align.generator roi_align_backward SCATTER PARAMS max_mode=false)
oplab_halide_kernel(roi_align_max_bwd roi_align.generator roi_align_backward SCATTER PARAMS max_mode=true)
