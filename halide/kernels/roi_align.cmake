# roi_align: forward (avg, max) and backward kernels.
oplab_halide_generator(roi_align.generator generators/roi_align_generator.cpp)
oplab_halide_kernel(roi_align_avg_fwd roi_align.generator roi_align_forward PARAMS max_mode=false)
oplab_halide_kernel(roi_align_max_fwd roi_align.generator roi_align_forward PARAMS max_mode=true)
oplab_halide_kernel(roi_align_avg_bwd roi_align.generator roi_align_backward PARAMS max_mode=false)
oplab_halide_kernel(roi_align_max_bwd roi_align.generator roi_align_backward PARAMS max_mode=true)

# The backward's scatter must be a native float atomic add on the GPU (atom.global.add.f32 in
# the PTX), never a compare-and-swap loop, which Halide 14 silently emits when the store and
# its implicit load are indexed differently: the PTX is checked at build time.
add_custom_command(OUTPUT roi_align_bwd_ptx.ok
  COMMAND roi_align.generator -g roi_align_backward -f roi_align_bwd_ptx -e assembly -o .
          target=${OPLAB_HALIDE_CUDA_TARGET}-no_runtime max_mode=false
  COMMAND sh -c "grep -q atom.global.add.f32 roi_align_bwd_ptx.s && ! grep -q atom.global.cas roi_align_bwd_ptx.s || { echo 'roi_align backward: the CUDA scatter is not a native atomic add'; exit 1; }"
  COMMAND ${CMAKE_COMMAND} -E touch roi_align_bwd_ptx.ok
  DEPENDS roi_align.generator VERBATIM)
add_custom_target(roi_align_ptx_atomics ALL DEPENDS ${CMAKE_CURRENT_BINARY_DIR}/roi_align_bwd_ptx.ok)
