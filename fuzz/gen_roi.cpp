// Cases of the three RoI ops: boxes that are reversed, zero-size, out of the image or
// exactly on its border; spatial scales that make x*s land on .5 ties (roi_pool rounding);
// fixed and adaptive grids; K = 0 and N = 0.
#include <cmath>
#include <tuple>

#include "fuzz/generators.h"
#include "fuzz/gen_values.h"

namespace oplab::fuzz {

namespace {

struct RoiShape {
  int64_t N, C, H, W, K, PH, PW;
  double scale;
};

RoiShape pick_roi_shape() {
  RoiShape s;
  s.N = *rc::gen::weightedElement<int64_t>({{1, 0}, {8, 1}, {3, 2}});
  s.C = pick_dim(1, 3);
  s.H = *rc::gen::weightedElement<int64_t>({{1, 0}, {12, pick_dim(1, 8)}});
  s.W = *rc::gen::weightedElement<int64_t>({{1, 0}, {12, pick_dim(1, 8)}});
  s.K = s.N == 0 ? 0 : *rc::gen::weightedElement<int64_t>({{1, 0}, {10, pick_dim(1, 4)}});
  s.PH = pick_dim(1, 4);
  s.PW = pick_dim(1, 4);
  s.scale = *rc::gen::element(1.0, 0.5, 0.25, 0.125, 2.0, 0.3, 1.0 / 3.0);
  return s;
}

// A box whose centre sample lands exactly on a border coordinate t of an axis: with one
// bin and an odd grid (or a fixed grid of 1) the middle sample is at start + len/2.
std::pair<double, double> centred_on(double t, double off) {
  const double len = double(*rc::gen::inRange<int>(0, 17)) / 2.0;  // 0 .. 8 in halves: exact
  const double start = t + off - len / 2.0;
  return {start, start + len};
}

// One box in image coordinates: its feature-map image (x*s) is edge-aimed. `off` is the
// half-pixel shift of the op (0.5 when aligned), so that centred boxes hit their target.
Tensor pick_rois(const RoiShape& s, double off) {
  Tensor rois({s.K, 5});
  for (int64_t k = 0; k < s.K; ++k) {
    rois.at(k, 0) = double(pick_dim(0, s.N - 1));
    double x1 = pick_coord(s.W), y1 = pick_coord(s.H), x2, y2;
    switch (*rc::gen::weightedElement<int>({{6, 0}, {1, 1}, {1, 2}, {2, 3}, {3, 4}})) {
      case 0:  // ordinary box of some size
        x2 = x1 + std::abs(pick_real(double(s.W) + 1));
        y2 = y1 + std::abs(pick_real(double(s.H) + 1));
        break;
      case 1:  // zero-size
        x2 = x1, y2 = y1;
        break;
      case 2:  // reversed
        x2 = x1 - std::abs(pick_real(3.0)), y2 = y1 - std::abs(pick_real(3.0));
        break;
      case 3:  // both corners edge-aimed
        x2 = pick_coord(s.W), y2 = pick_coord(s.H);
        break;
      default: {  // the centre sample exactly on a border: -1, 0, len-1, len
        const double L = double(s.H), M = double(s.W);
        std::tie(y1, y2) = centred_on(*rc::gen::element(-1.0, 0.0, L - 1.0, L), off);
        std::tie(x1, x2) = centred_on(*rc::gen::element(-1.0, 0.0, M - 1.0, M), off);
      }
    }
    rois.at(k, 1) = x1 / s.scale;
    rois.at(k, 2) = y1 / s.scale;
    rois.at(k, 3) = x2 / s.scale;
    rois.at(k, 4) = y2 / s.scale;
  }
  return rois;
}

Case roi_case(const std::string& op, const RoiShape& s, double off) {
  Case c;
  c.op = op;
  c.params = json{{"output_size", {s.PH, s.PW}}, {"spatial_scale", s.scale}};
  c.inputs["input"] = pick_tensor({s.N, s.C, s.H, s.W});
  c.inputs["rois"] = pick_rois(s, off);
  c.grad_output = pick_tensor({s.K, s.C, s.PH, s.PW});
  return c;
}

int64_t pick_sampling_ratio() { return *rc::gen::element<int64_t>(-1, 0, 1, 2, 3); }

}  // namespace

rc::Gen<Case> gen_roi_pool() {
  return rc::gen::exec([] { return roi_case("roi_pool", pick_roi_shape(), 0.0); });
}

rc::Gen<Case> gen_roi_align() {
  return rc::gen::exec([] {
    const bool aligned = *rc::gen::arbitrary<bool>();
    Case c = roi_case("roi_align", pick_roi_shape(), aligned ? 0.5 : 0.0);
    c.params["sampling_ratio"] = pick_sampling_ratio();
    c.params["aligned"] = aligned;
    c.params["pool_mode"] = *rc::gen::weightedElement<std::string>({{3, "avg"}, {1, "max"}});
    return c;
  });
}

rc::Gen<Case> gen_deform_roi_pool() {
  return rc::gen::exec([] {
    const RoiShape s = pick_roi_shape();
    Case c = roi_case("deform_roi_pool", s, 0.5);
    c.params["sampling_ratio"] = pick_sampling_ratio();
    c.params["gamma"] = *rc::gen::element(0.1, 0.0, 0.5, 1.0);
    if (*rc::gen::weightedElement<int>({{1, 0}, {3, 1}})) {
      Tensor off({s.K, 2, s.PH, s.PW});
      for (double& v : off.data) v = *rc::gen::weightedElement<int>({{1, 0}, {3, 1}}) ? pick_real(2.0) : 0.0;
      c.inputs["offset"] = std::move(off);
    }
    return c;
  });
}

}  // namespace oplab::fuzz
