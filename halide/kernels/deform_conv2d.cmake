# deform_conv2d: the forward and the three backward pipelines (grad_input; grad_offset and
# grad_mask; grad_weight and grad_bias).
oplab_halide_generator(deform_conv2d.generator generators/deform_conv2d_generator.cpp)
oplab_halide_kernel(deform_conv2d_fwd deform_conv2d.generator deform_conv2d_forward)
oplab_halide_kernel(deform_conv2d_grad_input deform_conv2d.generator deform_conv2d_grad_input)
oplab_halide_kernel(deform_conv2d_grad_offset_mask deform_conv2d.generator deform_conv2d_grad_offset_mask)
oplab_halide_kernel(deform_conv2d_grad_weight deform_conv2d.generator deform_conv2d_grad_weight)

# grad_input scatters every sample's four corners: a native float atomic add on the GPU.
oplab_check_ptx_atomics(deform_conv2d_grad_input deform_conv2d.generator deform_conv2d_grad_input)
