# deform_roi_pool: forward and backward kernels, with and without the offset input.
oplab_halide_generator(deform_roi_pool.generator generators/deform_roi_pool_generator.cpp)
oplab_halide_kernel(deform_roi_pool_fwd deform_roi_pool.generator deform_roi_pool_forward PARAMS has_offset=true)
oplab_halide_kernel(deform_roi_pool_plain_fwd deform_roi_pool.generator deform_roi_pool_forward PARAMS has_offset=false)
oplab_halide_kernel(deform_roi_pool_bwd deform_roi_pool.generator deform_roi_pool_backward PARAMS has_offset=true)
oplab_halide_kernel(deform_roi_pool_plain_bwd deform_roi_pool.generator deform_roi_pool_backward PARAMS has_offset=false)

# The backward's scatter must be a native float atomic add on the GPU (atom.global.add.f32 in
# the PTX), never a compare-and-swap loop, which Halide 14 silently emits when the store and
# its implicit load are indexed differently: the PTX is checked at build time.
add_custom_command(OUTPUT deform_roi_pool_bwd_ptx.ok
  COMMAND deform_roi_pool.generator -g deform_roi_pool_backward -f deform_roi_pool_bwd_ptx -e assembly -o .
          target=${OPLAB_HALIDE_CUDA_TARGET}-no_runtime has_offset=true
  COMMAND sh -c "grep -q atom.global.add.f32 deform_roi_pool_bwd_ptx.s && ! grep -q atom.global.cas deform_roi_pool_bwd_ptx.s || { echo 'deform_roi_pool backward: the CUDA scatter is not a native atomic add'; exit 1; }"
  COMMAND ${CMAKE_COMMAND} -E touch deform_roi_pool_bwd_ptx.ok
  DEPENDS deform_roi_pool.generator VERBATIM)
add_custom_target(deform_roi_pool_ptx_atomics ALL DEPENDS ${CMAKE_CURRENT_BINARY_DIR}/deform_roi_pool_bwd_ptx.ok)
