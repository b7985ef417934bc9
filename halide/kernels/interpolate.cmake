# interpolate: forward and backward kernels per kind (nearest also serves nearest-exact; linear
# serves linear, bilinear and trilinear; cubic is bicubic) and per number of interpolated axes.
# Sizes, scales, align_corners and nearest-exact are run-time parameters (generators/interpolate_generator.cpp).
oplab_halide_generator(interpolate.generator generators/interpolate_generator.cpp)
foreach(spec nearest:1 nearest:2 nearest:3 linear:1 linear:2 linear:3 cubic:2 area:1 area:2 area:3)
  string(REPLACE ":" ";" parts ${spec})
  list(GET parts 0 kind)
  list(GET parts 1 dims)
  oplab_halide_kernel(interp_${kind}${dims}_fwd interpolate.generator interpolate_forward PARAMS kind=${kind} dims=${dims})
  oplab_halide_kernel(interp_${kind}${dims}_bwd interpolate.generator interpolate_backward PARAMS kind=${kind} dims=${dims})
endforeach()
# nearest 2-D backward at exactly 2x on both axes, in one pass (CPU; interpolate_generator.cpp).
oplab_halide_kernel(interp_nearest2x2_bwd interpolate.generator interpolate_backward_nearest_x2 CPU_ONLY)

# antialias (bilinear and bicubic, 2-D): one separable table kernel serves the forward and,
# with the transposed tables, the backward (generators/interpolate_antialias_generator.cpp).
oplab_halide_generator(interpolate_antialias.generator generators/interpolate_antialias_generator.cpp)
oplab_halide_kernel(interp_antialias interpolate_antialias.generator interpolate_antialias)
