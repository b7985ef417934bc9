// grid_sample (SPEC §12): mode, padding_mode, align_corners, the input/grid shapes and the
// SPEC §7 checks. The input's spatial dims must be non-empty, as PyTorch requires: a grid
// position has to read some pixel under border and reflection padding.
#include <string>

#include "core/echo.h"
#include "core/limits.h"
#include "core/op_desc.h"
#include "core/ops/checks.h"
#include "core/params.h"

namespace oplab {

using namespace checks;

const char* grid_mode_name(GridMode m) {
  switch (m) {
    case GridMode::Bilinear: return "bilinear";
    case GridMode::Nearest: return "nearest";
    case GridMode::Bicubic: return "bicubic";
  }
  return "?";
}

const char* grid_padding_name(GridPadding p) {
  switch (p) {
    case GridPadding::Zeros: return "zeros";
    case GridPadding::Border: return "border";
    case GridPadding::Reflection: return "reflection";
  }
  return "?";
}

GridSampleParams parse_grid_sample(const Case& c) {
  const std::string& op = c.op;
  only_params(c, {"mode", "padding_mode", "align_corners"});
  only_inputs(c, {"input", "grid"}, {});
  const Tensor& x = c.in("input");
  const Tensor& g = c.in("grid");
  if (x.rank() != 4 && x.rank() != 5)
    fail(op, "input must have rank 4 [N, C, H, W] or 5 [N, C, D, H, W], got shape " + shape_str(x.shape));
  check_elements(op, "input", x.shape);
  GridSampleParams p;
  p.nd = x.rank() - 2;
  if (g.rank() != x.rank())
    fail(op, "grid must have rank " + std::to_string(x.rank()) + " for a " + std::to_string(x.rank()) +
                 "-D input (" + (p.nd == 2 ? "[N, Ho, Wo, 2]" : "[N, Do, Ho, Wo, 3]") + "), got shape " +
                 shape_str(g.shape));
  check_elements(op, "grid", g.shape);
  if (g.dim(g.rank() - 1) != p.nd)
    fail(op, "grid's last axis must have size " + std::to_string(p.nd) + " (x, y" + (p.nd == 3 ? ", z" : "") +
                 ") for a " + std::to_string(x.rank()) + "-D input, got shape " + shape_str(g.shape));
  if (g.dim(0) != x.dim(0))
    fail(op, "grid batch size " + std::to_string(g.dim(0)) + " must equal input batch size " +
                 std::to_string(x.dim(0)) + " (input " + shape_str(x.shape) + ", grid " + shape_str(g.shape) + ")");
  for (int d = 2; d < x.rank(); ++d)
    if (x.dim(d) <= 0)
      fail(op, "input spatial dims must be non-empty, got shape " + shape_str(x.shape));

  const std::string mode = text(c, "mode", "bilinear");
  if (mode == "bilinear") p.mode = GridMode::Bilinear;
  else if (mode == "nearest") p.mode = GridMode::Nearest;
  else if (mode == "bicubic") p.mode = GridMode::Bicubic;
  else fail(op, "mode=\"" + echo(mode) + "\" is not one of bilinear, nearest, bicubic");
  if (p.mode == GridMode::Bicubic && p.nd == 3)
    fail(op, "mode \"bicubic\" needs a 4-D input, got 5-D shape " + shape_str(x.shape));
  const std::string pad = text(c, "padding_mode", "zeros");
  if (pad == "zeros") p.padding = GridPadding::Zeros;
  else if (pad == "border") p.padding = GridPadding::Border;
  else if (pad == "reflection") p.padding = GridPadding::Reflection;
  else fail(op, "padding_mode=\"" + echo(pad) + "\" is not one of zeros, border, reflection");
  p.align_corners = boolean(c, "align_corners", false);

  p.N = x.dim(0), p.C = x.dim(1);
  p.H = x.dim(x.rank() - 2), p.W = x.dim(x.rank() - 1);
  if (p.nd == 3) p.D = x.dim(2), p.Do = g.dim(1);
  p.Ho = g.dim(g.rank() - 3), p.Wo = g.dim(g.rank() - 2);
  check_grad_output(c, p.output_shape());

  // Resource policy (core/limits.h): every output element reads its taps (nearest 1, bilinear
  // 2^nd corners, bicubic 16).
  ResourceUse use = case_tensors(c, p.output_shape());
  const double taps = p.mode == GridMode::Nearest ? 1.0 : p.mode == GridMode::Bicubic ? 16.0 : double(1 << p.nd);
  use.work = double(shape_span(p.output_shape())) * taps;
  use.work_what = "output elements x " + num_str(taps) + " taps";
  enforce_resource_limits(op, use);
  return p;
}

namespace {
const OpRegistrar kGridSample{"grid_sample",
                              {"grid_sample", 70, {{"input", true, true}, {"grid", true, true, true}},
                               typed_parser(parse_grid_sample)}};
}  // namespace

}  // namespace oplab
