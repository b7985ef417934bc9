// Kinks of ms_deform_attn (SPEC §13). The output is linear in value and, apart, in
// attention_weights, so those have none. In sampling_locations, each x (y) element moves its
// point's pixel column x = loc_x * W_l - 0.5 (row y = loc_y * H_l - 0.5) at rate W_l (H_l), and
// deform_conv2d's zero-padded rule switches pieces at every integer from -1 to W_l (H_l): the
// floor changes there, and the cut-offs at -1 and the level's size are integers too.
#include "core/params.h"
#include "gradcheck/eval.h"
#include "gradcheck/kinks_ops.h"
#include "reference/ms_deform_attn_points.h"

namespace oplab::gradcheck {

namespace {

OpKinks ms_deform_attn_kinks() {
  OpKinks k;
  k.affine = [](const Case&, const std::string& input) { return input != "sampling_locations"; };
  k.sources = [](const Case& c, const std::string& input, const KinkVisitor& visit) {
    if (input != "sampling_locations") return;
    const MsDeformAttnParams p = parse_ms_deform_attn(c);
    ref::for_each_msda_point(p, c.in("sampling_locations"), [&](const ref::MsdaPoint& s) {
      // A non-finite location samples nothing for good: constant, no kink.
      if (!s.finite) return;
      const int64_t H = p.H[size_t(s.l)], W = p.W[size_t(s.l)];
      visit(zero_padded_axis(s.y, H, {{s.loc + 1, double(H)}}, true));
      visit(zero_padded_axis(s.x, W, {{s.loc, double(W)}}, false));
    });
  };
  // An output element sums L * P bilinear samples of value (weights of one sign, summing to
  // at most 1), each times an attention weight of either sign.
  k.term_scale = [](const Case& c) {
    const MsDeformAttnParams p = parse_ms_deform_attn(c);
    return double(p.L * p.P) * max_abs(c.in("attention_weights")) * max_abs(c.in("value"));
  };
  return k;
}

const OpKinksRegistrar kRegistrar{"ms_deform_attn", ms_deform_attn_kinks()};

}  // namespace

}  // namespace oplab::gradcheck
