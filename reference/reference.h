#pragma once
// Naive double-precision references of every op, forward and backward (SPEC §2-6, §11).
// Written to be read beside the spec: obvious loops, no cleverness. Parameters arrive
// validated (core/params.h); these functions never check input again.
#include "core/params.h"

namespace oplab::ref {

// ---- deform_conv2d (SPEC §2) ----
Tensor deform_conv2d_forward(const DeformConvParams& p, const Tensor& input, const Tensor& offset,
                             const Tensor& weight, const Tensor* mask, const Tensor* bias);
struct DeformConvGrads {
  Tensor input, offset, weight;
  Tensor mask, bias;  // left empty (shape {}) when the case has no mask / no bias
};
DeformConvGrads deform_conv2d_backward(const DeformConvParams& p, const Tensor& input, const Tensor& offset,
                                       const Tensor& weight, const Tensor* mask, const Tensor* bias,
                                       const Tensor& grad_output);

// ---- roi_pool (SPEC §3) ----
Tensor roi_pool_forward(const RoiPoolParams& p, const Tensor& input, const Tensor& rois);
Tensor roi_pool_backward(const RoiPoolParams& p, const Tensor& input, const Tensor& rois,
                         const Tensor& grad_output);  // grad of input

// ---- roi_align (SPEC §4) ----
Tensor roi_align_forward(const RoiAlignParams& p, const Tensor& input, const Tensor& rois);
Tensor roi_align_backward(const RoiAlignParams& p, const Tensor& input, const Tensor& rois,
                          const Tensor& grad_output);  // grad of input
// Max mode only: the range grad_input can take when the winner of a bin may be any sample
// whose value lies within `tolerance` of the bin's maximum (times the largest |corner| it
// reads, plus the sample's own magnitude), as float32 rounding may pick any of them.
// lo[e] and hi[e] sum, over the bins, the least and greatest share element e receives over
// those near-tied samples. Used to tell a legitimate winner flip from a wrong backward.
void roi_align_max_grad_range(const RoiAlignParams& p, const Tensor& input, const Tensor& rois,
                              const Tensor& grad_output, double tolerance, Tensor& lo, Tensor& hi);

// ---- deform_roi_pool (SPEC §5) ----
Tensor deform_roi_pool_forward(const DeformRoiPoolParams& p, const Tensor& input, const Tensor& rois,
                               const Tensor* offset);
struct DeformRoiPoolGrads {
  Tensor input;
  Tensor offset;  // empty when the case has no offset
};
DeformRoiPoolGrads deform_roi_pool_backward(const DeformRoiPoolParams& p, const Tensor& input,
                                            const Tensor& rois, const Tensor* offset,
                                            const Tensor& grad_output);

// ---- ps_roi_align, ps_roi_pool (SPEC §11) ----
Tensor ps_roi_align_forward(const PsRoiParams& p, const Tensor& input, const Tensor& rois);
Tensor ps_roi_align_backward(const PsRoiParams& p, const Tensor& input, const Tensor& rois,
                             const Tensor& grad_output);  // grad of input
Tensor ps_roi_pool_forward(const PsRoiParams& p, const Tensor& input, const Tensor& rois);
Tensor ps_roi_pool_backward(const PsRoiParams& p, const Tensor& input, const Tensor& rois,
                            const Tensor& grad_output);  // grad of input

// ---- ms_deform_attn (SPEC §13) ----
Tensor ms_deform_attn_forward(const MsDeformAttnParams& p, const Tensor& value, const Tensor& sampling_locations,
                              const Tensor& attention_weights);
struct MsDeformAttnGrads {
  Tensor value, sampling_locations, attention_weights;
};
MsDeformAttnGrads ms_deform_attn_backward(const MsDeformAttnParams& p, const Tensor& value,
                                          const Tensor& sampling_locations, const Tensor& attention_weights,
                                          const Tensor& grad_output);

// ---- interpolate (SPEC §6) ----
Tensor interpolate_forward(const InterpParams& p, const Tensor& input);
Tensor interpolate_backward(const InterpParams& p, const Tensor& input, const Tensor& grad_output);

}  // namespace oplab::ref
