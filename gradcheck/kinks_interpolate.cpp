// Kinks of interpolate (SPEC §6, §16): none. Every mode, antialias too, is a fixed linear map of the input (the
// taps and weights depend only on sizes, scales and align_corners, none differentiable), so
// finite differences in the input meet no kink and the adjoint identity holds exactly. The
// nearest indices are kinks of nothing differentiable: they move only with sizes and scales.
#include "gradcheck/kinks_ops.h"

namespace oplab::gradcheck {

OpKinks interpolate_kinks() { return affine_kinks(); }

const OpKinksRegistrar kInterpolateKinks{"interpolate", interpolate_kinks()};

}  // namespace oplab::gradcheck
