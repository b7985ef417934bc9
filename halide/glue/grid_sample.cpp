// grid_sample on the Halide kernels: generators/grid_sample_generator.cpp for a 4-D input,
// generators/grid_sample3d_generator.cpp for a 5-D one. Float32 copies of the tensors viewed
// with the generators' layouts (dims reversed: input (w, h[, d], c, n), grid (k, x, y[, z], n)),
// mode, padding and align_corners as kernel parameters, and the calls: the forward, then
// grad_input and grad_grid when the case has grad_output. Nothing to sample (an empty batch,
// channel axis or grid) leaves every output and gradient 0 without a call. The forward on the
// CPU, 4-D and 5-D, and the 2-D grad_grid have two paths (grid_sample_path.h): channels-last,
// or the plain gather for inputs too large for its copy and for sparse grids.
#include <algorithm>
#include <memory>
#include <stdexcept>
#include <vector>

#include "core/params.h"
#include "grid_sample3d_fwd_cpu.h"
#include "grid_sample3d_fwd_cuda.h"
#include "grid_sample3d_fwd_opencl.h"
#include "grid_sample3d_grad_grid_cpu.h"
#include "grid_sample3d_grad_grid_cuda.h"
#include "grid_sample3d_grad_grid_opencl.h"
#include "grid_sample3d_grad_input_cpu.h"
#include "grid_sample3d_grad_input_cuda.h"
#include "grid_sample3d_grad_input_opencl.h"
#include "grid_sample3d_plain_fwd_cpu.h"
#include "grid_sample3d_plain_fwd_cuda.h"
#include "grid_sample3d_plain_fwd_opencl.h"
#include "grid_sample_fwd_cpu.h"
#include "grid_sample_fwd_cuda.h"
#include "grid_sample_fwd_opencl.h"
#include "grid_sample_grad_grid_cpu.h"
#include "grid_sample_grad_grid_cuda.h"
#include "grid_sample_grad_grid_opencl.h"
#include "grid_sample_grad_input_cpu.h"
#include "grid_sample_grad_input_cuda.h"
#include "grid_sample_grad_input_opencl.h"
#include "grid_sample_plain_grad_grid_cpu.h"
#include "grid_sample_plain_grad_grid_cuda.h"
#include "grid_sample_plain_grad_grid_opencl.h"
#include "grid_sample_plain_fwd_cpu.h"
#include "grid_sample_plain_fwd_cuda.h"
#include "grid_sample_plain_fwd_opencl.h"
#include "halide/generators/kernel_widths.h"
#include "halide/glue/grid_sample_path.h"
#include "halide/halide_glue.h"
#include "halide/ops_glue.h"

namespace oplab::halide_glue {

// The copy reads and writes every pixel of a block once, in whole cache lines; the plain gather
// reads a cache line per tap row and channel. Measured on the CPU kernels themselves, the two
// alternated in one process (median of 15 ratios plain / channels-last, 64 channels): at 1/64
// position per pixel the plain gather wins every shape (0.22 to 0.69: 64^2 and 128^2 pixels,
// 1 and 8 images); at 1/32 and 1/16 it depends on the batch and the grid's width (16 x 16 on
// 64 x 64: 0.65 for one image, whose input stays in cache between calls, 1.40 for 8; 16 x 8
// on 64 x 64: 1.26 and 2.46); at 1/8 and above channels-last wins (1.2 to 2.5).
constexpr double kMinPositionsPerPixel = 1.0 / 64;

bool grid_sample_channels_last(int64_t positions, int64_t pixels, int64_t blocks) {
  if (pixels > kHalideMaxAllocation / kGridSampleBlockBytesPerPixel / std::max<int64_t>(blocks, 1)) return false;
  return double(positions) >= kMinPositionsPerPixel * double(pixels);
}

namespace {

using Buf = Halide::Runtime::Buffer<float>;

// The kernel paths (HalideOp::paths).
constexpr const char* kForward2d = "forward 2-D";
constexpr const char* kPlainGather = "forward 2-D: plain gather (sparse grid)";
constexpr const char* kBilinearZeros = "forward 2-D channels-last: bilinear, zeros";
constexpr const char* kBilinearBorder = "forward 2-D channels-last: bilinear, border";
constexpr const char* kBilinearReflection = "forward 2-D channels-last: bilinear, reflection";
constexpr const char* kNearestZeros = "forward 2-D channels-last: nearest, zeros";
constexpr const char* kNearestBorder = "forward 2-D channels-last: nearest, border";
constexpr const char* kNearestReflection = "forward 2-D channels-last: nearest, reflection";
constexpr const char* kBicubicZeros = "forward 2-D channels-last: bicubic, zeros";
constexpr const char* kBicubicBorder = "forward 2-D channels-last: bicubic, border";
constexpr const char* kBicubicReflection = "forward 2-D channels-last: bicubic, reflection";
constexpr const char* kChannelBlocks = "forward 2-D channels-last: more than 16 channels (several blocks)";
constexpr const char* kForward3d = "forward 3-D";
constexpr const char* kPlainGather3d = "forward 3-D: plain gather (sparse grid)";
constexpr const char* kTrilinear3d = "forward 3-D channels-last: bilinear";
constexpr const char* kNearest3d = "forward 3-D channels-last: nearest";
constexpr const char* kNarrowBlocks3d = "forward 3-D channels-last: 4 channels or fewer (blocks of 4)";
constexpr const char* kChannelBlocks3d = "forward 3-D channels-last: more than 16 channels (several blocks)";
constexpr const char* kBackward2d = "backward 2-D";
constexpr const char* kGradGridChannelsLast = "backward 2-D: grad_grid channels-last";
constexpr const char* kGradGridPlain = "backward 2-D: grad_grid plain gather (sparse grid)";
constexpr const char* kScatterBlocks = "backward 2-D: more than 8 channels (several scatter blocks)";
constexpr const char* kScatterBlocks3d = "backward 3-D: more than 8 channels (several scatter blocks)";
constexpr const char* kNarrowScatter3d = "backward 3-D: 4 channels or fewer (scatter blocks of 4)";
constexpr const char* kBackward3d = "backward 3-D";

const std::vector<KernelPath> kGridSamplePaths = {
    {kNoKernelCall},
    {kForward2d, PathOn::Gpu},  // both kernel names compile to the same GPU code
    {kPlainGather, PathOn::Cpu},
    {kBilinearZeros, PathOn::Cpu},
    {kBilinearBorder, PathOn::Cpu},
    {kBilinearReflection, PathOn::Cpu},
    {kNearestZeros, PathOn::Cpu},
    {kNearestBorder, PathOn::Cpu},
    {kNearestReflection, PathOn::Cpu},
    {kBicubicZeros, PathOn::Cpu},
    {kBicubicBorder, PathOn::Cpu},
    {kBicubicReflection, PathOn::Cpu},
    {kChannelBlocks, PathOn::Cpu},
    {kForward3d, PathOn::Gpu},
    {kPlainGather3d, PathOn::Cpu},
    {kTrilinear3d, PathOn::Cpu},
    {kNearest3d, PathOn::Cpu},
    {kNarrowBlocks3d, PathOn::Cpu},
    {kChannelBlocks3d, PathOn::Cpu},
    {kBackward2d},
    {kScatterBlocks, PathOn::Cpu},
    {kGradGridChannelsLast, PathOn::Cpu},
    {kGradGridPlain, PathOn::Cpu},
    {kBackward3d},
    {kScatterBlocks3d, PathOn::Cpu},
    {kNarrowScatter3d, PathOn::Cpu},
};

int mode_code(GridMode m) { return m == GridMode::Bilinear ? 0 : m == GridMode::Nearest ? 1 : 2; }
int padding_code(GridPadding p) { return p == GridPadding::Zeros ? 0 : p == GridPadding::Border ? 1 : 2; }

class GridSampleCall {
 public:
  GridSampleCall(const Case& c, const ValidParams& vp, HalideDevice device)
      : p_(vp.as<GridSampleParams>()), device_(device) {
    input_ = to_float(c.in("input"));
    grid_ = to_float(c.in("grid"));
    out_ = TensorF(p_.output_shape());
    work_ = p_.N > 0 && p_.C > 0 && p_.Do > 0 && p_.Ho > 0 && p_.Wo > 0;
    input_b_ = view(input_);  // first: view() also installs the error handler
    grid_b_ = view(grid_);
    out_b_ = view(out_);
    if (c.grad_output) {
      has_grad_ = true;
      gout_ = to_float(*c.grad_output);
      g_input_ = TensorF(input_.shape), g_grid_ = TensorF(grid_.shape);
      gout_b_ = view(gout_);
      gi_b_ = view(g_input_);
      gg_b_ = view(g_grid_);
    }
  }

  ~GridSampleCall() {
    for (Buf* b : {&input_b_, &grid_b_, &out_b_, &gout_b_, &gi_b_, &gg_b_}) release(*b);
  }

  void forward() {
    if (!work_) return paths_.take(kNoKernelCall);
    const bool channels_last = copies_channels_last();
    note_forward_path(channels_last);
    auto fwd = three_d() ? (channels_last ? OPLAB_KERNEL(grid_sample3d_fwd, device_)
                                          : OPLAB_KERNEL(grid_sample3d_plain_fwd, device_))
               : channels_last ? OPLAB_KERNEL(grid_sample_fwd, device_)
                               : OPLAB_KERNEL(grid_sample_plain_fwd, device_);
    check(fwd(&ctx_, input_b_, grid_b_, mode(), padding(), ac(), out_b_), ctx_, "grid_sample forward");
  }

  void backward() {
    if (!work_ || !has_grad_) return;
    paths_.take(three_d() ? kBackward3d : kBackward2d);
    if (device_ == HalideDevice::Cpu && p_.C > oplab_widths::kGridScatterLanes)
      paths_.take(three_d() ? kScatterBlocks3d : kScatterBlocks);
    if (device_ == HalideDevice::Cpu && three_d() && p_.C <= oplab_widths::kGridNarrowScatterLanes)
      paths_.take(kNarrowScatter3d);
    // 2-D: grad_grid copies the input as the forward does, and takes the plain gather where
    // the forward does.
    const bool grad_grid_channels_last = !three_d() && copies_channels_last();
    if (device_ == HalideDevice::Cpu && !three_d())
      paths_.take(grad_grid_channels_last ? kGradGridChannelsLast : kGradGridPlain);
    auto gi = three_d() ? OPLAB_KERNEL(grid_sample3d_grad_input, device_) : OPLAB_KERNEL(grid_sample_grad_input, device_);
    auto gg = three_d()                  ? OPLAB_KERNEL(grid_sample3d_grad_grid, device_)
              : grad_grid_channels_last ? OPLAB_KERNEL(grid_sample_grad_grid, device_)
                                        : OPLAB_KERNEL(grid_sample_plain_grad_grid, device_);
    check(gi(&ctx_, input_b_, grid_b_, mode(), padding(), ac(), gout_b_, gi_b_), ctx_, "grid_sample grad_input");
    check(gg(&ctx_, input_b_, grid_b_, mode(), padding(), ac(), gout_b_, gg_b_), ctx_, "grid_sample grad_grid");
  }

  const std::vector<std::string>& taken_paths() const { return paths_.list(); }

  Result result() {
    if (work_) {
      finish(device_, out_b_);
      if (has_grad_)
        for (Buf* b : {&gi_b_, &gg_b_}) finish(device_, *b);
    }
    Result r;
    r.outputs["output"] = to_double(out_);
    if (has_grad_) {
      r.grads["input"] = to_double(g_input_);
      r.grads["grid"] = to_double(g_grid_);
    }
    return r;
  }

  void before_timed_backward() {}
  void sync(bool backward) {
    if (!on_gpu(device_) || !work_) return;
    std::initializer_list<Buf*> fwd = {&out_b_};
    std::initializer_list<Buf*> bwd = {&gi_b_, &gg_b_};
    for (Buf* b : backward ? bwd : fwd)
      if (b->raw_buffer()->device && b->device_sync() != 0)
        throw std::runtime_error(std::string(halide_backend_name(device_)) + ": grid_sample did not finish on the device");
  }

 private:
  bool three_d() const { return p_.nd == 3; }
  int mode() const { return mode_code(p_.mode); }
  int padding() const { return padding_code(p_.padding); }
  int ac() const { return p_.align_corners ? 1 : 0; }
  // The CPU's channels-last kernels: 2-D, every block of an image copied at once; 5-D, one,
  // with a plane of zeros past the end of each axis (grid_sample3d_generator.cpp).
  bool copies_channels_last() const {
    if (three_d()) return grid_sample_channels_last(p_.Do * p_.Ho * p_.Wo, (p_.D + 1) * (p_.H + 1) * (p_.W + 1), 1);
    return grid_sample_channels_last(p_.Ho * p_.Wo, p_.H * p_.W, grid_sample_blocks(p_.C));
  }

  // The forward's path (kGridSamplePaths): on the CPU the channels-last kernels are
  // specialised on the mode (2-D: and the padding) and work in blocks of channels.
  void note_forward_path(bool channels_last) {
    if (device_ != HalideDevice::Cpu) return paths_.take(three_d() ? kForward3d : kForward2d);
    if (three_d()) {
      if (!channels_last) return paths_.take(kPlainGather3d);
      paths_.take(p_.mode == GridMode::Nearest ? kNearest3d : kTrilinear3d);
      if (p_.C <= oplab_widths::kGridNarrowScatterLanes) paths_.take(kNarrowBlocks3d);
      if (p_.C > oplab_widths::kWidestFloatVector) paths_.take(kChannelBlocks3d);
      return;
    }
    if (!channels_last) return paths_.take(kPlainGather);
    static const char* const kSpecialised[3][3] = {
        {kBilinearZeros, kBilinearBorder, kBilinearReflection},
        {kNearestZeros, kNearestBorder, kNearestReflection},
        {kBicubicZeros, kBicubicBorder, kBicubicReflection}};
    paths_.take(kSpecialised[mode()][padding()]);
    if (p_.C > oplab_widths::kWidestFloatVector) paths_.take(kChannelBlocks);
  }

  GridSampleParams p_;
  PathLog paths_;
  HalideDevice device_;
  bool work_ = false, has_grad_ = false;
  CallContext ctx_;
  TensorF input_, grid_, out_, gout_, g_input_, g_grid_;
  Buf input_b_, grid_b_, out_b_, gout_b_, gi_b_, gg_b_;
};

// Every valid case has kernels: 4-D and 5-D, each mode the spec allows for its rank.
const HalideOpRegistrar registrar({"grid_sample", run_call<GridSampleCall>, nullptr, prepare_call<GridSampleCall>,
                                   kGridSamplePaths});

}  // namespace

}  // namespace oplab::halide_glue
