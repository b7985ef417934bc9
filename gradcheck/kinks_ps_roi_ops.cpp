// Kinks of ps_roi_align and ps_roi_pool (SPEC §11): none in their one differentiable input.
// Both are fixed linear maps of the feature map (bilinear weights of samples, or a bin's
// mean, placed by the rois, which get no gradient), so finite differences in the input meet
// no kink and the adjoint identity holds exactly.
#include "gradcheck/kinks_ops.h"

namespace oplab::gradcheck {

namespace {

const OpKinksRegistrar kPsRoiAlign{"ps_roi_align", affine_kinks()};
const OpKinksRegistrar kPsRoiPool{"ps_roi_pool", affine_kinks()};

}  // namespace

}  // namespace oplab::gradcheck
