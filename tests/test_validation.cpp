// One test per bad-input rule of SPEC §7: every backend rejects the case before any work,
// with the same one-line message naming op, argument and values. Also the zero-element
// cases that §7 declares valid.
#include <gtest/gtest.h>

#include <cmath>

#include "cli/builtin_backends.h"
#include "core/backend.h"

namespace oplab {
namespace {

Tensor zeros(Shape s) { return Tensor(std::move(s)); }

Case dcn(Shape x = {1, 4, 5, 5}, Shape off = {1, 18, 3, 3}, Shape w = {2, 4, 3, 3}) {
  Case c;
  c.op = "deform_conv2d";
  c.inputs["input"] = zeros(x);
  c.inputs["offset"] = zeros(off);
  c.inputs["weight"] = zeros(w);
  return c;
}

Case roi(const std::string& op, Shape x = {2, 1, 4, 4}) {
  Case c;
  c.op = op;
  c.params = json{{"output_size", {2, 2}}, {"spatial_scale", 1.0}};
  c.inputs["input"] = zeros(x);
  Tensor rois({2, 5});
  rois.data = {0, 0, 0, 2, 2, 1, 1, 1, 3, 3};
  c.inputs["rois"] = rois;
  return c;
}

Case interp(Shape x, json params) {
  Case c;
  c.op = "interpolate";
  c.params = std::move(params);
  c.inputs["input"] = zeros(std::move(x));
  return c;
}

// Every backend built in must give exactly `message` (backends that cannot run here are
// still asked: validation comes before the availability check).
void expect_invalid(const Case& c, const std::string& message) {
  for (Backend* b : builtin_backends().all()) {
    try {
      evaluate(*b, c);
      ADD_FAILURE() << b->name() << " accepted a case that must fail with: " << message;
    } catch (const InvalidCase& e) {
      EXPECT_EQ(std::string(e.what()), message) << "backend " << b->name();
      EXPECT_EQ(std::string(e.what()).find('\n'), std::string::npos);
    }
  }
}

void expect_valid(const Case& c, const Shape& out) {
  EXPECT_EQ(validate_case(c), out);
  for (Backend* b : builtin_backends().all()) {
    if (b->unavailable_reason() || b->unsupported_reason(c)) continue;
    // The seeded bugs are wrong on purpose; a cheater raises on what it leaves unwritten.
    if (b->role() == BackendRole::SeededBug) continue;
    const Result r = evaluate(*b, c);
    EXPECT_EQ(r.outputs.at("output").shape, out) << b->name();
  }
}

TEST(Validation, UnknownOpAndParameterAndInput) {
  Case c = dcn();
  c.op = "deform_conv3d";
  expect_invalid(c, "deform_conv3d: unknown op (known: deform_conv2d, roi_pool, roi_align, deform_roi_pool, interpolate, ps_roi_align, ps_roi_pool, grid_sample, ms_deform_attn)");
  c = dcn();
  c.params["strides"] = 1;
  expect_invalid(c, "deform_conv2d: unknown parameter \"strides\"");
  c = dcn();
  c.inputs["masks"] = zeros({1});
  expect_invalid(c, "deform_conv2d: unknown input \"masks\"");
  c = dcn();
  c.inputs.erase("weight");
  expect_invalid(c, "deform_conv2d: missing input \"weight\"");
}

TEST(Validation, WrongRank) {
  expect_invalid(dcn({4, 5, 5}), "deform_conv2d: input must have rank 4, got shape [4, 5, 5]");
  expect_invalid(roi("roi_align", {1, 4, 4}), "roi_align: input must have rank 4, got shape [1, 4, 4]");
  expect_invalid(interp({4, 4}, {{"mode", "nearest"}, {"size", 2}}),
                 "interpolate: input must have rank 3, 4 or 5 (N, C and 1-3 spatial dims), got shape [4, 4]");
}

TEST(Validation, MismatchedDims) {
  expect_invalid(dcn({1, 4, 5, 5}, {1, 18, 4, 3}), "deform_conv2d: offset shape [1, 18, 4, 3] must be [1, 18, 3, 3]");
  expect_invalid(dcn({1, 4, 5, 5}, {2, 18, 3, 3}), "deform_conv2d: offset shape [2, 18, 3, 3] must be [1, 18, 3, 3]");
  Case c = dcn();
  c.inputs["mask"] = zeros({1, 9, 3, 2});
  expect_invalid(c, "deform_conv2d: mask shape [1, 9, 3, 2] must be [1, 9, 3, 3]");
  c = dcn();
  c.inputs["bias"] = zeros({3});
  expect_invalid(c, "deform_conv2d: bias shape [3] must be [2]");
  c = roi("roi_pool");
  c.grad_output = zeros({2, 1, 2, 3});
  expect_invalid(c, "roi_pool: grad_output shape [2, 1, 2, 3] must equal the output shape [2, 1, 2, 2]");
}

TEST(Validation, GroupsMustDivide) {
  // weight.shape[1] = 3 does not divide C = 4.
  expect_invalid(dcn({1, 4, 5, 5}, {1, 18, 3, 3}, {2, 3, 3, 3}),
                 "deform_conv2d: weight.shape[1]=3 does not divide input channels C=4");
  // G = 4 / 1 = 4 weight groups, Co = 2.
  expect_invalid(dcn({1, 4, 5, 5}, {1, 18, 3, 3}, {2, 1, 3, 3}),
                 "deform_conv2d: weight groups G=4 do not divide output channels 2");
  // offset.shape[1] = 20 is not a multiple of 2*3*3.
  expect_invalid(dcn({1, 4, 5, 5}, {1, 20, 3, 3}),
                 "deform_conv2d: offset.shape[1]=20 is not a positive multiple of 2*kh*kw=18");
  // D = 54 / 18 = 3 offset groups, C = 4.
  expect_invalid(dcn({1, 4, 5, 5}, {1, 54, 3, 3}), "deform_conv2d: offset groups D=3 do not divide input channels C=4");
}

TEST(Validation, OutputSizeMustBePositive) {
  // H + 2p - dilated kernel = 2 - 5 = -3 -> Ho = -3/1 + 1 = -2.
  Case c = dcn({1, 4, 2, 2}, {1, 18, 1, 1});
  c.params["dilation"] = 2;
  expect_invalid(c, "deform_conv2d: output size Ho=-2, Wo=-2 must be positive (input [1, 4, 2, 2], kernel 3x3)");
}

TEST(Validation, DeformConvParameters) {
  Case c = dcn();
  c.params["stride"] = json{0, 1};
  expect_invalid(c, "deform_conv2d: stride=[0, 1] must be positive");
  c = dcn();
  c.params["padding"] = -1;
  expect_invalid(c, "deform_conv2d: padding=[-1, -1] must be >= 0");
  c = dcn();
  c.params["dilation"] = json{1, 2, 3};
  expect_invalid(c, "deform_conv2d: dilation=[1,2,3] must be an integer or a pair of integers");
}

TEST(Validation, RoisShapeAndBatchIndex) {
  Case c = roi("roi_align");
  c.inputs["rois"] = zeros({2, 4});
  expect_invalid(c, "roi_align: rois must have shape [K, 5], got [2, 4]");
  c = roi("roi_align");
  c.inputs["rois"].at(1, 0) = 2;
  expect_invalid(c, "roi_align: rois[1][0]=2 is not a batch index of input with N=2");
  c = roi("roi_pool");
  c.inputs["rois"].at(0, 0) = -1;
  expect_invalid(c, "roi_pool: rois[0][0]=-1 is not a batch index of input with N=2");
  c = roi("deform_roi_pool");
  c.inputs["rois"].at(1, 0) = 0.5;
  expect_invalid(c, "deform_roi_pool: rois[1][0]=0.5 is not an integer batch index");
  c = roi("roi_align");
  c.inputs["rois"].at(0, 0) = NAN;
  expect_invalid(c, "roi_align: rois[0][0]=nan is not an integer batch index");
}

TEST(Validation, NonFiniteRoiCoordinate) {
  Case c = roi("roi_align");
  c.inputs["rois"].at(1, 3) = INFINITY;
  expect_invalid(c, "roi_align: rois[1][3]=inf is not a finite coordinate");
  c = roi("roi_pool");
  c.inputs["rois"].at(0, 2) = NAN;
  expect_invalid(c, "roi_pool: rois[0][2]=nan is not a finite coordinate");
}

TEST(Validation, SpatialScale) {
  Case c = roi("roi_align");
  c.params["spatial_scale"] = "nan";
  expect_invalid(c, "roi_align: spatial_scale=nan must be finite and > 0");
  c.params["spatial_scale"] = "inf";
  expect_invalid(c, "roi_align: spatial_scale=inf must be finite and > 0");
  c.params["spatial_scale"] = 0;
  expect_invalid(c, "roi_align: spatial_scale=0 must be finite and > 0");
  c = roi("deform_roi_pool");
  c.params["spatial_scale"] = -0.25;
  expect_invalid(c, "deform_roi_pool: spatial_scale=-0.25 must be finite and > 0");
}

TEST(Validation, OutputSizeParameter) {
  Case c = roi("roi_pool");
  c.params["output_size"] = json{0, 2};
  expect_invalid(c, "roi_pool: output_size=[0, 2] must be positive");
  c.params.erase("output_size");
  expect_invalid(c, "roi_pool: missing parameter output_size");
  c = roi("roi_align");
  c.params["pool_mode"] = "sum";
  expect_invalid(c, "roi_align: pool_mode=\"sum\" must be \"avg\" or \"max\"");
}

TEST(Validation, DeformRoiPoolOffsetShape) {
  Case c = roi("deform_roi_pool");
  c.inputs["offset"] = zeros({2, 2, 2, 3});
  expect_invalid(c, "deform_roi_pool: offset shape [2, 2, 2, 3] must be [2, 2, 2, 2]");
}

TEST(Validation, SizeAndScaleFactor) {
  expect_invalid(interp({1, 1, 4}, {{"mode", "nearest"}, {"size", 3}, {"scale_factor", 2.0}}),
                 "interpolate: exactly one of size and scale_factor must be given");
  expect_invalid(interp({1, 1, 4}, {{"mode", "nearest"}}), "interpolate: exactly one of size and scale_factor must be given");
  expect_invalid(interp({1, 1, 4, 4}, {{"mode", "nearest"}, {"size", {3, 0}}}),
                 "interpolate: size=[3,0] must be positive integers");
  expect_invalid(interp({1, 1, 4}, {{"mode", "nearest"}, {"scale_factor", -2.0}}),
                 "interpolate: scale_factor=-2.0 must be finite positive numbers");
  expect_invalid(interp({1, 1, 4}, {{"mode", "nearest"}, {"scale_factor", 0.2}}),
                 "interpolate: scale_factor=0.2 gives output size 0 for input size 4; it must be positive");
  expect_invalid(interp({1, 1, 4, 4}, {{"mode", "nearest"}, {"size", {3, 3, 3}}}),
                 "interpolate: size=[3,3,3] must have one entry per spatial dim (2)");
  expect_invalid(interp({1, 1, 4}, {{"mode", "nearest"}, {"size", 8}, {"recompute_scale_factor", true}}),
                 "interpolate: recompute_scale_factor=true needs scale_factor, not size");
}

TEST(Validation, AlignCornersOnlyWithInterpolatingModes) {
  expect_invalid(interp({1, 1, 4, 4}, {{"mode", "nearest"}, {"size", 8}, {"align_corners", false}}),
                 "interpolate: align_corners=false is only allowed with linear, bilinear, bicubic or trilinear, not mode \"nearest\"");
  expect_invalid(interp({1, 1, 4, 4}, {{"mode", "area"}, {"size", 2}, {"align_corners", true}}),
                 "interpolate: align_corners=true is only allowed with linear, bilinear, bicubic or trilinear, not mode \"area\"");
}

TEST(Validation, ModeMustFitRank) {
  expect_invalid(interp({1, 1, 4, 4}, {{"mode", "linear"}, {"size", 8}}),
                 "interpolate: mode \"linear\" needs a 3-D input, got 4-D shape [1, 1, 4, 4]");
  expect_invalid(interp({1, 1, 4, 4, 4}, {{"mode", "bicubic"}, {"size", 8}}),
                 "interpolate: mode \"bicubic\" needs a 4-D input, got 5-D shape [1, 1, 4, 4, 4]");
  expect_invalid(interp({1, 1, 4}, {{"mode", "cubic"}, {"size", 8}}),
                 "interpolate: mode=\"cubic\" is not one of nearest, nearest-exact, linear, bilinear, bicubic, trilinear, area");
}

TEST(Validation, IndexOverflowIsRefused) {
  // 1 x 1 x 50000 x 50000 = 2.5e9 elements: beyond the int32 index of the kernels.
  expect_invalid(interp({1, 1, 2, 2}, {{"mode", "nearest"}, {"size", {50000, 50000}}}),
                 "interpolate: output shape [1, 1, 50000, 50000] has 2500000000 elements, more than the int32 index of "
                 "the kernels allows (2147483647)");
  expect_invalid(interp({1, 1, 2}, {{"mode", "nearest"}, {"scale_factor", 1e10}}),
                 "interpolate: scale_factor=10000000000 gives an output size beyond the int32 index of the kernels");
}

TEST(Validation, ZeroElementCasesAreValid) {
  // K = 0 rois.
  Case c = roi("roi_align");
  c.inputs["rois"] = zeros({0, 5});
  expect_valid(c, {0, 1, 2, 2});
  // N = 0 batch with K = 0.
  c = roi("roi_pool", {0, 3, 4, 4});
  c.inputs["rois"] = zeros({0, 5});
  expect_valid(c, {0, 3, 2, 2});
  // H = 0 input with rois: every sample is out of range.
  c = roi("roi_align", {2, 1, 0, 4});
  expect_valid(c, {2, 1, 2, 2});
  // deform_conv2d with N = 0.
  expect_valid(dcn({0, 4, 5, 5}, {0, 18, 3, 3}), {0, 2, 3, 3});
  // Ho = 1 from truncating division: H + 2p = 4 < dilated kernel 5, stride 2 (SPEC §8).
  Case d = dcn({1, 4, 4, 4}, {1, 18, 1, 1});
  d.params = json{{"stride", 2}, {"dilation", 2}};
  expect_valid(d, {1, 2, 1, 1});
}

}  // namespace
}  // namespace oplab
