// What the ops' comparison traits share: nudging boxes and offsets, the RoI ops' grid terms,
// sample decisions and driving parameter.
#include <algorithm>
#include <cmath>

#include "compare/op_compare.h"
#include "core/geometry_rounding.h"
#include "reference/roi_geometry.h"

namespace oplab::compare {

double nudged(double v, double r) { return v * (1 + r) + (v == 0 ? r : 0.0); }

double nudged_normalised(double v, double r) { return v + r * (std::fabs(v) + 1); }

void nudge_rois(Case& c, double ra, double rb, double end_sign) {
  Tensor& t = c.inputs.at("rois");
  for (int64_t k = 0; k < t.dim(0); ++k)
    for (int j = 1; j < 5; ++j) t.at(k, j) = nudged(t.at(k, j), (j % 2 ? ra : rb) * (j >= 3 ? end_sign : 1.0));
}

void scale_boxes_in(Case& c, DType t) {
  Tensor& r = c.inputs.at("rois");
  const double scale = c.params.value("spatial_scale", 1.0);
  for (int64_t k = 0; k < r.dim(0); ++k)
    for (int64_t j = 1; j < 5; ++j) r.at(k, j) = round_to_type(r.at(k, j) * scale, t);
  c.params["spatial_scale"] = 1.0;
}

void nudge_offset(Case& c, double ra, double rb) {
  auto it = c.inputs.find("offset");
  if (it == c.inputs.end()) return;
  Tensor& t = it->second;
  // Channel parity separates the two axes in both layouts ([N, 2DK, Ho, Wo] and [K, 2, PH, PW]).
  const int64_t plane = t.rank() == 4 ? t.dim(2) * t.dim(3) : 1, channels = t.rank() >= 2 ? t.dim(1) : 1;
  for (size_t i = 0; i < t.data.size(); ++i) t.data[i] = nudged(t.data[i], ((int64_t(i) / plane) % channels) % 2 ? ra : rb);
}

void roi_axis_decisions(Decisions& d, double bin_start, double bin, int64_t g, int64_t size) {
  for (int64_t i = 0; i < std::min(g, kMaxLoggedGrid); ++i) {
    const double v = ref::roi_sample(bin_start, bin, i, g);
    // The rule's own tests (reference/roi_bilinear.h), written so that NaN is out of range.
    const bool in_range = v >= -1.0 && v <= double(size);
    d.add(FlipKind::RangeCutoff, in_range);
    if (in_range) d.add(FlipKind::Floor, std::min(int64_t(std::floor(std::max(v, 0.0))), size - 1));
  }
}

DrivingParameter longest_box_side(const Case& c) {
  DrivingParameter d{"longest box side (feature px)", 0};
  const Tensor& rois = c.in("rois");
  const double s = c.params.value("spatial_scale", 1.0);
  for (int64_t k = 0; k < rois.dim(0); ++k)
    d.value = std::max({d.value, std::fabs(rois.at(k, 3) - rois.at(k, 1)) * s, std::fabs(rois.at(k, 4) - rois.at(k, 2)) * s});
  return d;
}

double roi_grid_terms(const Case& c, int64_t sampling_ratio, double min_extent) {
  const Tensor& rois = c.in("rois");
  double g = sampling_ratio > 0 ? double(sampling_ratio) : 1;
  const double s = c.params.value("spatial_scale", 1.0);
  const auto os = c.params.at("output_size");
  const double ph = os.is_array() ? os[0].get<double>() : os.get<double>();
  const double pw = os.is_array() ? os[1].get<double>() : os.get<double>();
  if (sampling_ratio <= 0)
    for (int64_t k = 0; k < rois.dim(0); ++k)
      g = std::max({g, std::ceil(std::max(std::fabs(rois.at(k, 4) - rois.at(k, 2)) * s, min_extent) / ph) + 1,
                    std::ceil(std::max(std::fabs(rois.at(k, 3) - rois.at(k, 1)) * s, min_extent) / pw) + 1});
  // A grid of at most g x g samples of 4 corners, plus the coordinate arithmetic.
  return 4 * g * g + 8;
}

}  // namespace oplab::compare
