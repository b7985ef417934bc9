// Cases of the three RoI ops: boxes that are reversed, zero-size, out of the image or
// exactly on its border; boxes whose extent puts the adaptive grid's ceil exactly on, or a
// hair past, an integer (the grid jumps there); spatial scales that make x*s land on .5 ties
// (roi_pool rounding); fixed and adaptive grids; K = 0 and N = 0; odd and prime image sizes.
#include <array>
#include <cmath>
#include <vector>
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
  s.N = pick_one<int64_t>({{8, 1}, {3, 2}, {1, 0}});
  s.C = pick_dim(1, 3);
  s.H = pick_one<int>({{12, 1}, {1, 0}}) ? pick_extent(1, 8) : 0;
  s.W = pick_one<int>({{12, 1}, {1, 0}}) ? pick_extent(1, 8) : 0;
  s.K = s.N == 0 ? 0 : pick_one<int>({{10, 1}, {1, 0}}) ? pick_dim(1, 4) : 0;
  s.PH = pick_dim(1, 4);
  s.PW = pick_dim(1, 4);
  s.scale = pick_of<double>({1.0, 0.5, 0.25, 0.125, 2.0, 0.3, 1.0 / 3.0});
  return s;
}

// A box whose centre sample lands exactly on a border coordinate t of an axis: with one
// bin and an odd grid (or a fixed grid of 1) the middle sample is at start + len/2.
std::pair<double, double> centred_on(double t, double off) {
  const double len = double(*rc::gen::inRange<int>(0, 17)) / 2.0;  // 0 .. 8 in halves: exact
  const double start = t + off - len / 2.0;
  return {start, start + len};
}

// An extent of `bins` * k (k = 1..3), exactly or a hair either side: the adaptive grid
// ceil(extent / bins) is k exactly, or jumps to k + 1 a hair above.
double grid_jump_extent(int64_t bins) {
  const double k = double(pick_dim(1, 3));
  return double(bins) * k + pick_one<double>({{1, 0.0}, {1, 1e-9}, {1, -1e-9}});
}

Tensor pick_boxes(const RoiShape& s, double off);
std::array<double, 5> pick_box(const RoiShape& s, double off);

// One box in image coordinates: its feature-map image (x*s) is edge-aimed. `off` is the
// half-pixel shift of the op (0.5 when aligned), so that centred boxes hit their target.
Tensor pick_rois(const RoiShape& s, double off) {
  // One pick of its own, like pick_tensor (gen_values.cpp says why): fewer boxes then leave
  // the picks after them untouched.
  return *rc::gen::exec([s, off] { return pick_boxes(s, off); });
}

// Up to s.K boxes. Each may be dropped, the choice every box shrinks to first, and each is a
// pick of its own, so RapidCheck can remove any one of them (not only the last) and the
// others stay as they were: a minimal case keeps only the boxes that matter.
Tensor pick_boxes(const RoiShape& s, double off) {
  std::vector<std::array<double, 5>> boxes;
  for (int64_t k = 0; k < s.K; ++k) {
    // The box is drawn even when dropped, so that every later pick keeps its position.
    const bool keep = pick_one<int>({{1, 0}, {12, 1}}) == 1;
    const auto box = *rc::gen::exec([s, off] { return pick_box(s, off); });
    if (keep) boxes.push_back(box);
  }
  Tensor rois({int64_t(boxes.size()), 5});
  for (size_t k = 0; k < boxes.size(); ++k)
    for (int j = 0; j < 5; ++j) rois.at(int64_t(k), j) = boxes[k][size_t(j)];
  return rois;
}

std::array<double, 5> pick_box(const RoiShape& s, double off) {
  std::array<double, 5> box;
  {
    box[0] = double(pick_dim(0, s.N - 1));
    double x1 = pick_coord(s.W), y1 = pick_coord(s.H), x2, y2;
    switch (pick_one<int>({{6, 0}, {1, 1}, {1, 2}, {2, 3}, {3, 4}, {2, 5}})) {
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
      case 4: {  // the centre sample exactly on a border: -1, 0, len-1, len
        const double L = double(s.H), M = double(s.W);
        std::tie(y1, y2) = centred_on(pick_of<double>({0.0, -1.0, L - 1.0, L}), off);
        std::tie(x1, x2) = centred_on(pick_of<double>({0.0, -1.0, M - 1.0, M}), off);
        break;
      }
      default:  // the adaptive grid on the edge of a jump
        y2 = y1 + grid_jump_extent(s.PH);
        x2 = x1 + grid_jump_extent(s.PW);
    }
    box[1] = x1 / s.scale;
    box[2] = y1 / s.scale;
    box[3] = x2 / s.scale;
    box[4] = y2 / s.scale;
  }
  return box;
}

Case roi_case(const std::string& op, const RoiShape& s, double off) {
  Case c;
  c.op = op;
  c.params = json{{"output_size", {s.PH, s.PW}}, {"spatial_scale", s.scale}};
  c.inputs["input"] = pick_tensor({s.N, s.C, s.H, s.W});
  c.inputs["rois"] = pick_rois(s, off);
  c.grad_output = pick_tensor({c.in("rois").dim(0), s.C, s.PH, s.PW});
  return c;
}

int64_t pick_sampling_ratio() { return pick_of<int64_t>({-1, 1, 2, 0, 3}); }

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
    c.params["pool_mode"] = pick_one<std::string>({{3, "avg"}, {1, "max"}});
    return c;
  });
}

rc::Gen<Case> gen_deform_roi_pool() {
  return rc::gen::exec([] {
    const RoiShape s = pick_roi_shape();
    Case c = roi_case("deform_roi_pool", s, 0.5);
    c.params["sampling_ratio"] = pick_sampling_ratio();
    c.params["gamma"] = pick_of<double>({0.1, 0.0, 0.5, 1.0});
    if (pick_one<int>({{1, 0}, {3, 1}}))
      c.inputs["offset"] = *rc::gen::exec([s, K = c.in("rois").dim(0)] {  // one pick of its own (see pick_tensor)
        Tensor off({K, 2, s.PH, s.PW});
        for (double& v : off.data) v = pick_one<int>({{1, 0}, {3, 1}}) ? pick_real(2.0) : 0.0;
        return off;
      });
    return c;
  });
}

}  // namespace oplab::fuzz
