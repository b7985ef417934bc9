# grid_sample: the forward, grad_input (a scatter) and grad_grid (a gather over the channels),
# for 4-D input (grid_sample_*) and 5-D input (grid_sample3d_*); mode, padding and
# align_corners are parameters of each kernel.
oplab_halide_generator(grid_sample.generator generators/grid_sample_generator.cpp generators/grid_sample3d_generator.cpp)
oplab_halide_kernel(grid_sample_fwd grid_sample.generator grid_sample_forward)
# The 2-D forward without the CPU's channels-last copy (the glue's choice for huge inputs and
# sparse grids, halide/glue/grid_sample_path.h); on a GPU the same code as grid_sample_fwd.
oplab_halide_kernel(grid_sample_plain_fwd grid_sample.generator grid_sample_forward PARAMS channels_last=false)
oplab_halide_kernel(grid_sample_grad_input grid_sample.generator grid_sample_grad_input SCATTER)
oplab_halide_kernel(grid_sample_grad_grid grid_sample.generator grid_sample_grad_grid)
# The 2-D grad_grid without the CPU's channels-last copy, chosen as the plain forward is.
oplab_halide_kernel(grid_sample_plain_grad_grid grid_sample.generator grid_sample_grad_grid PARAMS channels_last=false)
oplab_halide_kernel(grid_sample3d_fwd grid_sample.generator grid_sample3d_forward)
# The 5-D forward without the CPU's channels-last copy, as grid_sample_plain_fwd.
oplab_halide_kernel(grid_sample3d_plain_fwd grid_sample.generator grid_sample3d_forward PARAMS channels_last=false)
oplab_halide_kernel(grid_sample3d_grad_input grid_sample.generator grid_sample3d_grad_input SCATTER)
oplab_halide_kernel(grid_sample3d_grad_grid grid_sample.generator grid_sample3d_grad_grid)
