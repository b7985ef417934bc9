# ms_deform_attn: the forward, grad_value (a scatter) and the point gradients (grad of the
# sampling locations and of the attention weights, a gather).
oplab_halide_generator(ms_deform_attn.generator generators/ms_deform_attn_generator.cpp)
oplab_halide_kernel(ms_deform_attn_fwd ms_deform_attn.generator ms_deform_attn_forward)
oplab_halide_kernel(ms_deform_attn_grad_value ms_deform_attn.generator ms_deform_attn_grad_value SCATTER)
oplab_halide_kernel(ms_deform_attn_grad_points ms_deform_attn.generator ms_deform_attn_grad_points)
