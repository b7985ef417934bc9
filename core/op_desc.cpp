#include "core/op_desc.h"

#include "core/params.h"

namespace oplab {

namespace {

template <class F>
std::function<Shape(const Case&)> shape_of(F parse) {
  return [parse](const Case& c) { return parse(c).output_shape(); };
}

std::vector<OpDesc> make_ops() {
  return {
      {"deform_conv2d",
       {{"input", true, true}, {"offset", true, true}, {"weight", true, true}, {"mask", false, true}, {"bias", false, true}},
       json{{"stride", {1, 1}}, {"padding", {0, 0}}, {"dilation", {1, 1}}},
       shape_of(parse_deform_conv2d)},
      {"roi_pool",
       {{"input", true, true}, {"rois", true, false}},
       json{{"output_size", nullptr}, {"spatial_scale", 1.0}},
       shape_of(parse_roi_pool)},
      {"roi_align",
       {{"input", true, true}, {"rois", true, false}},
       json{{"output_size", nullptr}, {"spatial_scale", 1.0}, {"sampling_ratio", -1}, {"aligned", false}, {"pool_mode", "avg"}},
       shape_of(parse_roi_align)},
      {"deform_roi_pool",
       {{"input", true, true}, {"rois", true, false}, {"offset", false, true}},
       json{{"output_size", nullptr}, {"spatial_scale", 1.0}, {"sampling_ratio", 0}, {"gamma", 0.1}},
       shape_of(parse_deform_roi_pool)},
      {"interpolate",
       {{"input", true, true}},
       json{{"mode", "nearest"}, {"size", nullptr}, {"scale_factor", nullptr}, {"align_corners", nullptr},
            {"recompute_scale_factor", nullptr}},
       shape_of(parse_interpolate)},
  };
}

}  // namespace

const std::vector<OpDesc>& all_ops() {
  static const std::vector<OpDesc> ops = make_ops();
  return ops;
}

const OpDesc& op_desc(const std::string& name) {
  for (const auto& d : all_ops())
    if (d.name == name) return d;
  throw InvalidCase(name + ": unknown op (known: deform_conv2d, roi_pool, roi_align, deform_roi_pool, interpolate)");
}

std::vector<std::string> grad_inputs(const Case& c) {
  std::vector<std::string> names;
  for (const auto& in : op_desc(c.op).inputs)
    if (in.differentiable && c.has(in.name)) names.push_back(in.name);
  return names;
}

}  // namespace oplab
