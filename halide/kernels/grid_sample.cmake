# grid_sample (4-D input): the forward, grad_input (a scatter) and grad_grid (a gather over
# the channels); mode, padding and align_corners are parameters of each kernel.
oplab_halide_generator(grid_sample.generator generators/grid_sample_generator.cpp)
oplab_halide_kernel(grid_sample_fwd grid_sample.generator grid_sample_forward)
oplab_halide_kernel(grid_sample_grad_input grid_sample.generator grid_sample_grad_input SCATTER)
oplab_halide_kernel(grid_sample_grad_grid grid_sample.generator grid_sample_grad_grid)
