# deform_conv2d: the forward and the three backward pipelines (grad_input; grad_offset and
# grad_mask; grad_weight and grad_bias), and on the CPU the column gradient the first two share.
oplab_halide_generator(deform_conv2d.generator generators/deform_conv2d_generator.cpp)
oplab_halide_kernel(deform_conv2d_fwd deform_conv2d.generator deform_conv2d_forward)
oplab_halide_kernel(deform_conv2d_grad_input deform_conv2d.generator deform_conv2d_grad_input SCATTER)
oplab_halide_kernel(deform_conv2d_grad_offset_mask deform_conv2d.generator deform_conv2d_grad_offset_mask)
oplab_halide_kernel(deform_conv2d_grad_weight deform_conv2d.generator deform_conv2d_grad_weight)
# The column gradient Gcol shared by the CPU grad_input and grad_offset/grad_mask (the GPU
# pipelines compute their own): a CPU kernel only.
get_property(oplab_dcn_rt GLOBAL PROPERTY OPLAB_HALIDE_RUNTIME)
add_halide_library(deform_conv2d_gcol_cpu FROM deform_conv2d.generator GENERATOR deform_conv2d_gcol
                   TARGETS ${OPLAB_HALIDE_CPU_TARGET} FEATURES user_context USE_RUNTIME ${oplab_dcn_rt})
target_link_libraries(oplab_halide_kernels INTERFACE deform_conv2d_gcol_cpu)
