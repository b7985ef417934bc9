// Cases of the RoI ops (shared by their generators in fuzz/ops/): boxes that are reversed, zero-size, out of the image or
// exactly on its border; boxes whose extent puts the adaptive grid's ceil exactly on, or a
// hair past, an integer (the grid jumps there); spatial scales that make x*s land on .5 ties
// (roi_pool rounding); fixed and adaptive grids; K = 0 and N = 0; odd and prime image sizes.
#include <algorithm>
#include <array>
#include <cmath>
#include <vector>
#include <tuple>

#include "core/op_desc.h"
#include "core/params.h"
#include "fuzz/case_edit.h"
#include "fuzz/gen_values.h"
#include "fuzz/roi_family.h"
#include "reference/roi_geometry.h"

namespace oplab::fuzz {

RoiShape pick_roi_shape(bool position_sensitive, bool wide) {
  RoiShape s;
  if (wide) {  // the weight-0 options are where shrinking goes (sometimes_redrawn)
    s.N = pick_one<int64_t>({{3, 1}, {1, 2}});
    s.C = pick_one<int64_t>({{0, 1}, {0, 2}, {1, 17}, {1, 16}, {1, 21}});
    s.H = pick_extent(1, 8);
    s.W = pick_one<int64_t>({{0, 1}, {0, 2}, {1, 16}, {1, 17}, {1, 19}});
    s.K = pick_dim(1, 4);
    s.PH = pick_one<int64_t>({{0, 1}, {1, 4}});
    s.PW = pick_one<int64_t>({{0, 1}, {1, 4}, {1, 5}});
    s.scale = pick_of<double>({1.0, 0.5, 0.25, 2.0, 0.3});
    s.Co = position_sensitive ? pick_one<int64_t>({{0, 1}, {0, 2}, {1, 9}, {1, 8}, {1, 21}}) : s.C;
    if (position_sensitive) s.C = s.Co * s.PH * s.PW;
    return s;
  }
  s.N = pick_one<int64_t>({{8, 1}, {3, 2}, {1, 0}});
  s.C = pick_dim(1, 3);
  s.H = pick_one<int>({{12, 1}, {1, 0}}) ? pick_extent(1, 8) : 0;
  s.W = pick_one<int>({{12, 1}, {1, 0}}) ? pick_extent(1, 8) : 0;
  s.K = s.N == 0 ? 0 : pick_one<int>({{10, 1}, {1, 0}}) ? pick_dim(1, 4) : 0;
  s.PH = pick_dim(1, 4);
  s.PW = pick_dim(1, 4);
  s.scale = pick_of<double>({1.0, 0.5, 0.25, 0.125, 2.0, 0.3, 1.0 / 3.0});
  // Position-sensitive ops read PH*PW input channels per output channel; the picks stay in
  // the same order as for the other ops.
  s.Co = position_sensitive ? std::min<int64_t>(s.C, 2) : s.C;
  if (position_sensitive) s.C = s.Co * s.PH * s.PW;
  return s;
}

namespace {

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

}  // namespace

Case roi_case(const std::string& op, const RoiShape& s, double off) {
  Case c;
  c.op = op;
  c.params = json{{"output_size", {s.PH, s.PW}}, {"spatial_scale", s.scale}};
  c.inputs["input"] = pick_tensor({s.N, s.C, s.H, s.W});
  c.inputs["rois"] = pick_rois(s, off);
  c.grad_output = pick_tensor({c.in("rois").dim(0), s.Co, s.PH, s.PW});
  return c;
}

int64_t pick_sampling_ratio() { return pick_of<int64_t>({-1, 1, 2, 0, 3}); }

// ---- the roi rules of SPEC §7 ----

namespace {

// A roi row to break, adding one when the case has none (its grad_output then no longer fits
// either; the oracle names whichever rule it checks first, and every backend must agree).
int64_t some_roi(Case& c) {
  Tensor& rois = c.inputs["rois"];
  if (rois.dim(0) == 0) rois = Tensor({1, 5}, 0.0);
  return pick_dim(0, rois.dim(0) - 1);
}

}  // namespace

std::vector<Mutation> roi_mutations() {
  return {
      [](Case& c) { c.inputs["rois"] = Tensor({c.in("rois").dim(0), 4}, 0.5); },  // rois not [K, 5]
      [](Case& c) {                                                                 // batch index out of range
        const int64_t k = some_roi(c);
        c.inputs["rois"].at(k, 0) = *rc::gen::element(double(c.in("input").dim(0)), -1.0, 0.5);
      },
      [](Case& c) {                                                                 // non-finite coordinate
        const int64_t k = some_roi(c);
        c.inputs["rois"].at(k, *rc::gen::inRange(1, 5)) = *rc::gen::element(double(NAN), double(INFINITY), -double(INFINITY));
      },
      [](Case& c) { c.params["spatial_scale"] = *rc::gen::element(0.0, -0.5); },  // spatial_scale <= 0
      [](Case& c) { c.params["output_size"] = *rc::gen::element(json{0, 2}, json{2, -1}, json(0)); },
      [](Case& c) { c.params.erase("output_size"); },
  };
}

std::vector<Mutation> ps_roi_mutations() {
  std::vector<Mutation> m = roi_mutations();
  m.push_back([](Case& c) {  // C = 4 Co + 1 channels: never a multiple of PH * PW = 4
    Shape s = c.in("input").shape;
    s[1] = 4 * s[1] + 1;
    c.inputs["input"] = Tensor(s, 0.5);
    c.params["output_size"] = json{2, 2};
  });
  return m;
}

// ---- features ----

void classify_coord(double v, int64_t len, const char* axis, std::set<std::string>& f) {
  const double L = double(len);
  const std::string a = axis;
  if (v == -1) f.insert(a + "=-1");
  if (v == 0) f.insert(a + "=0");
  if (v == L - 1) f.insert(a + "=len-1");
  if (v == L) f.insert(a + "=len");
  for (double e : {-1.0, 0.0, L - 1, L})
    if (v != e && std::fabs(v - e) < 1e-6) f.insert(a + " a hair from a border");
  if (v < -1 || v > L) f.insert(a + " outside");
  if (std::fabs(v) > 100 + L) f.insert(a + " far outside");
  if (v == std::floor(v) && v > 0 && v < L - 1) f.insert(a + " on an interior lattice point");
}

namespace {

void common_roi_features(const RoiFrame& p, std::set<std::string>& f) {
  if (p.K == 0) f.insert("K=0");
  if (p.N == 0) f.insert("N=0");
  if (p.H == 0 || p.W == 0) f.insert("H=0 or W=0");
}

}  // namespace

// Boxes, grids and samples come from the reference's RoI geometry (reference/roi_geometry.h),
// so a sample the reference puts on a border is classified as exactly there.
void roi_grid_features(const Case& c, const RoiFrame& p, bool aligned, int64_t sampling_ratio, bool clamp,
                       std::set<std::string>& f) {
  common_roi_features(p, f);
  if (p.PH == 1 && p.PW == 1) f.insert("1x1 output");
  f.insert(sampling_ratio > 0 ? "fixed grid" : "adaptive grid");
  const Tensor& rois = c.in("rois");
  const ref::RoiBoxRule rule{aligned, clamp};
  for (int64_t k = 0; k < p.K; ++k) {
    const double x1 = rois.at(k, 1) * p.scale, y1 = rois.at(k, 2) * p.scale;
    const double x2 = rois.at(k, 3) * p.scale, y2 = rois.at(k, 4) * p.scale;
    if (x2 < x1 || y2 < y1) f.insert("reversed box");
    if (x2 == x1 && y2 == y1) f.insert("zero-size box");
    if (x2 < 0 || y2 < 0 || x1 > double(p.W) || y1 > double(p.H)) f.insert("box outside the image");
    const ref::RoiBox b = ref::roi_box(rois, k, p.scale, rule, p.PH, p.PW, sampling_ratio);
    if (b.gh <= 0 || b.gw <= 0) f.insert("bins with no samples");
    if (sampling_ratio <= 0 && b.gh > 0 && std::ceil(b.bin_h) == b.bin_h) f.insert("adaptive grid on an exact integer");
    for (double q : {b.bin_h, b.bin_w})
      if (sampling_ratio <= 0 && q > 0 && q != std::round(q) && std::fabs(q - std::round(q)) < 1e-6)
        f.insert("adaptive grid a hair from an integer (ceil jumps)");
    for (int64_t ph = 0; ph < p.PH; ++ph)
      for (int64_t iy = 0; iy < b.gh; ++iy)
        classify_coord(ref::roi_sample(ref::roi_bin_start(b.sy, ph, b.bin_h), b.bin_h, iy, b.gh), p.H, "sample y", f);
    for (int64_t pw = 0; pw < p.PW; ++pw)
      for (int64_t ix = 0; ix < b.gw; ++ix)
        classify_coord(ref::roi_sample(ref::roi_bin_start(b.sx, pw, b.bin_w), b.bin_w, ix, b.gw), p.W, "sample x", f);
  }
}

void roi_rounded_features(const Case& c, const RoiFrame& p, bool plus_one, std::set<std::string>& f) {
  common_roi_features(p, f);
  const Tensor& rois = c.in("rois");
  const double extra = plus_one ? 1.0 : 0.0;
  for (int64_t k = 0; k < p.K; ++k) {
    for (int j = 1; j < 5; ++j) {
      const double v = rois.at(k, j) * p.scale;
      if (v - std::floor(v) == 0.5) f.insert("round tie (x*s = n + 0.5)");
    }
    const double xs = std::round(rois.at(k, 1) * p.scale), xe = std::round(rois.at(k, 3) * p.scale);
    const double ys = std::round(rois.at(k, 2) * p.scale), ye = std::round(rois.at(k, 4) * p.scale);
    if (xe < xs || ye < ys) f.insert("reversed box");
    if (xe < 0 || ye < 0 || xs >= double(p.W) || ys >= double(p.H)) f.insert("box outside the image (empty bins)");
    if (std::max(xe - xs + extra, 1.0) < double(p.PW) || std::max(ye - ys + extra, 1.0) < double(p.PH))
      f.insert("more bins than pixels (overlapping bins)");
  }
}

// ---- permutation ----

Permuted permute_roi(const Case& c, int64_t channel_block) {
  using Perm = std::vector<int64_t>;
  const Tensor& x = c.in("input");
  const Tensor& rois = c.in("rois");
  const int64_t blocks = channel_block > 0 ? x.dim(1) / channel_block : 0;
  // Output channel o moves to po[o]; input channel o*block + j moves with it.
  const Perm pn = rotate_all(x.dim(0)), po = rotate_all(blocks), pk = rotate_all(rois.dim(0));
  Perm pc(size_t(x.dim(1)));
  for (int64_t ch = 0; ch < x.dim(1); ++ch)
    pc[size_t(ch)] = po[size_t(ch / channel_block)] * channel_block + ch % channel_block;
  auto permute2 = [](const Tensor& t, const Perm& p0, const Perm& p1) { return permute_dim(permute_dim(t, 0, p0), 1, p1); };
  Permuted out{c, nullptr};
  out.c.inputs["input"] = permute2(x, pn, pc);
  Tensor r = rois;
  for (int64_t k = 0; k < r.dim(0); ++k) r.at(k, 0) = double(pn[size_t(int64_t(r.at(k, 0)))]);
  out.c.inputs["rois"] = permute_dim(r, 0, pk);
  if (c.has("offset")) out.c.inputs["offset"] = permute_dim(c.in("offset"), 0, pk);
  if (c.grad_output) out.c.grad_output = permute2(*c.grad_output, pk, po);
  out.map = [pn, pc, pk, po, permute2](const std::string& key, const Tensor& t) {
    if (key == "outputs.output") return permute2(t, pk, po);
    if (key == "grads.input") return permute2(t, pn, pc);
    return permute_dim(t, 0, pk);  // grads.offset
  };
  return out;
}

Permuted permute_ps_roi(const Case& c) {
  const ValidParams vp = op_desc(c.op).parse(c);
  const PsRoiParams& p = vp.as<PsRoiParams>();
  return permute_roi(c, p.PH * p.PW);
}

}  // namespace oplab::fuzz
