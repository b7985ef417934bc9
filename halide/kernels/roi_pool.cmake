# roi_pool: forward and backward kernels.
oplab_halide_generator(roi_pool.generator generators/roi_pool_generator.cpp)
oplab_halide_kernel(roi_pool_fwd roi_pool.generator roi_pool_forward)
oplab_halide_kernel(roi_pool_bwd roi_pool.generator roi_pool_backward)

# The backward's scatter must be a native float atomic add on the GPU (atom.global.add.f32 in
# the PTX), never a compare-and-swap loop, which Halide 14 silently emits when the store and
# its implicit load are indexed differently: the PTX is checked at build time.
add_custom_command(OUTPUT roi_pool_bwd_ptx.ok
  COMMAND roi_pool.generator -g roi_pool_backward -f roi_pool_bwd_ptx -e assembly -o .
          target=${OPLAB_HALIDE_CUDA_TARGET}-no_runtime
  COMMAND sh -c "grep -q atom.global.add.f32 roi_pool_bwd_ptx.s && ! grep -q atom.global.cas roi_pool_bwd_ptx.s || { echo 'roi_pool backward: the CUDA scatter is not a native atomic add'; exit 1; }"
  COMMAND ${CMAKE_COMMAND} -E touch roi_pool_bwd_ptx.ok
  DEPENDS roi_pool.generator VERBATIM)
add_custom_target(roi_pool_ptx_atomics ALL DEPENDS ${CMAKE_CURRENT_BINARY_DIR}/roi_pool_bwd_ptx.ok)
