// The torchvision peer's standalone reproductions (core/repro.h): each op written as the one
// torch / torchvision call a user makes, with literal arguments, in the dtype and on the
// device of the backend; the backward through torch.autograd.grad with the case's grad_output.
#include "peer/torchvision_repro.h"

#include <filesystem>
#include <fstream>
#include <sstream>

#include "peer/repro_python.h"

namespace oplab {

namespace {

std::string torch_dtype(DType t) {
  switch (t) {
    case DType::Float64: return "torch.float64";
    case DType::Float32: return "torch.float32";
    case DType::Float16: return "torch.float16";
    case DType::BFloat16: return "torch.bfloat16";
    case DType::UInt8: return "torch.uint8";
  }
  return "torch.float64";
}

// A parameter with the default torch takes when the case leaves it out.
std::string param(const Case& c, const char* name, const char* fallback) {
  return c.params.contains(name) ? py_value(c.params.at(name)) : fallback;
}

// Deformable DETR's pure-PyTorch ms_deform_attn, as the peer runs it: the function of
// msda_pytorch.py beside the bridge (its text from `def` on), so the script carries the peer's
// own code rather than a second copy of it.
std::string msda_function(const std::string& bridge_dir) {
  std::ifstream in(std::filesystem::path(bridge_dir) / "msda_pytorch.py");
  std::stringstream s;
  s << in.rdbuf();
  const std::string text = s.str();
  const size_t at = text.find("def ms_deform_attn");
  if (at == std::string::npos) throw std::runtime_error("repro: msda_pytorch.py beside the torchvision bridge has no ms_deform_attn");
  return text.substr(at);
}

// The call of `op` on the tensors named as the case's inputs.
std::string call(const Case& c) {
  const std::string& op = c.op;
  auto opt = [&](const char* n) { return c.has(n) ? std::string(n) : std::string("None"); };
  if (op == "deform_conv2d")
    return "torchvision.ops.deform_conv2d(input, offset, weight, " + opt("bias") + ", stride=" + param(c, "stride", "1") +
           ", padding=" + param(c, "padding", "0") + ", dilation=" + param(c, "dilation", "1") + ", mask=" + opt("mask") + ")";
  if (op == "roi_pool" || op == "ps_roi_pool")
    return "torchvision.ops." + op + "(input, rois, output_size=" + param(c, "output_size", "None") +
           ", spatial_scale=" + param(c, "spatial_scale", "1.0") + ")";
  if (op == "roi_align")
    return "torchvision.ops.roi_align(input, rois, output_size=" + param(c, "output_size", "None") + ", spatial_scale=" +
           param(c, "spatial_scale", "1.0") + ", sampling_ratio=" + param(c, "sampling_ratio", "-1") +
           ", aligned=" + param(c, "aligned", "False") + ")";
  if (op == "ps_roi_align")
    return "torchvision.ops.ps_roi_align(input, rois, output_size=" + param(c, "output_size", "None") +
           ", spatial_scale=" + param(c, "spatial_scale", "1.0") + ", sampling_ratio=" + param(c, "sampling_ratio", "-1") + ")";
  if (op == "grid_sample")
    return "F.grid_sample(input, grid, mode=" + param(c, "mode", "\"bilinear\"") + ", padding_mode=" +
           param(c, "padding_mode", "\"zeros\"") + ", align_corners=" + param(c, "align_corners", "False") + ")";
  if (op == "ms_deform_attn") return "ms_deform_attn(value, spatial_shapes, sampling_locations, attention_weights)";
  if (op == "interpolate")
    return "F.interpolate(input, size=" + param(c, "size", "None") + ", scale_factor=" + param(c, "scale_factor", "None") +
           ", mode=" + param(c, "mode", "\"nearest\"") + ", align_corners=" + param(c, "align_corners", "None") +
           ", recompute_scale_factor=" + param(c, "recompute_scale_factor", "None") +
           ", antialias=" + param(c, "antialias", "False") + ")";
  throw std::runtime_error("repro: the torchvision peer has no call for op " + op);
}

}  // namespace

ReproScript torchvision_repro(const ReproRequest& r, DType dtype, bool cuda, const std::string& versions,
                              const std::string& bridge_dir) {
  const Case& c = r.c;
  const std::string device = cuda ? "cuda" : "cpu";
  std::ostringstream f;
  f << "def library():\n    torch.set_num_threads(1)  # as oplab runs it: one thread, one summation order\n";
  std::vector<std::string> diff;
  for (const auto& [name, t] : c.inputs) {
    // ms_deform_attn's level shapes are sizes: integers, on the CPU, whatever the dtype.
    const bool sizes = name == "spatial_shapes" || name == "level_start_index";
    const bool grad = r.spec.count("grad_" + name) != 0;
    if (grad) diff.push_back(name);
    f << "    " << name << " = torch.tensor(inputs[\"" << name << "\"], dtype=" << (sizes ? "torch.int64" : torch_dtype(dtype))
      << (sizes || !cuda ? "" : ", device=\"" + device + "\"") << (grad ? ", requires_grad=True" : "") << ")\n";
  }
  f << "    output = " << call(c) << "\n    answer = {\"output\": output}\n";
  if (!diff.empty()) {
    f << "    grads = torch.autograd.grad(output, [";
    for (size_t i = 0; i < diff.size(); ++i) f << (i ? ", " : "") << diff[i];
    f << "], torch.tensor(grad_output, dtype=output.dtype, device=output.device), allow_unused=True)\n";
    for (size_t i = 0; i < diff.size(); ++i)
      f << "    answer[\"grad_" << diff[i] << "\"] = torch.zeros_like(" << diff[i] << ") if grads[" << i << "] is None else grads[" << i
        << "]\n";
  }
  f << "    return {k: v.detach().cpu().double().numpy() for k, v in answer.items()}\n";
  std::string library = f.str();
  if (c.op == "ms_deform_attn") library = msda_function(bridge_dir) + "\n\n" + library;
  PythonRepro p;
  p.needs = "torch, torchvision and numpy";
  p.imports = "import torch\nimport torch.nn.functional as F\nimport torchvision\nimport torchvision.ops";
  p.library = library;
  p.about = "torch / torchvision (" + versions + ") in " + torch_dtype(dtype).substr(6) + " on the " + (cuda ? "GPU" : "CPU");
  return python_repro(r, p);
}

}  // namespace oplab
