// The kernel of my_roi_align.h as an oplab plugin: roi_align, float64, forward only.
#include <cstdio>
#include <cstring>
#include <string>

#include "my_roi_align.h"
#include "oplab/plugin.h"

namespace {

// The value after "key": in the params JSON (written compactly by oplab).
std::string json_value(const char* json, const char* key) {
  const std::string quoted = std::string("\"") + key + "\":";
  const char* p = std::strstr(json, quoted.c_str());
  return p ? std::string(p + quoted.size()) : std::string();
}

int32_t evaluate(const oplab_call_v1* call, char* message, size_t message_size) {
  if (std::strcmp(call->op, "roi_align") != 0 || call->grad_output) {
    std::snprintf(message, message_size, "only the forward of roi_align");
    return OPLAB_UNSUPPORTED;
  }
  const oplab_tensor_v1 *input = nullptr, *rois = nullptr;
  for (int32_t i = 0; i < call->n_inputs; ++i) {
    if (std::strcmp(call->inputs[i].name, "input") == 0) input = &call->inputs[i];
    if (std::strcmp(call->inputs[i].name, "rois") == 0) rois = &call->inputs[i];
  }
  const oplab_tensor_v1& out = call->outputs[0];
  my::RoiAlignArgs a{input->shape[0], input->shape[1], input->shape[2], input->shape[3], rois->shape[0],
                     out.shape[2],    out.shape[3],    1.0,            -1,             false, false};
  std::string v;
  if (!(v = json_value(call->params_json, "spatial_scale")).empty()) a.spatial_scale = std::strtod(v.c_str(), nullptr);
  if (!(v = json_value(call->params_json, "sampling_ratio")).empty()) a.sampling_ratio = std::strtoll(v.c_str(), nullptr, 10);
  a.aligned = json_value(call->params_json, "aligned").rfind("true", 0) == 0;
  a.max_mode = json_value(call->params_json, "pool_mode").rfind("\"max\"", 0) == 0;
  my::roi_align_forward(a, static_cast<const double*>(input->data), static_cast<const double*>(rois->data),
                        static_cast<double*>(out.data));
  return OPLAB_OK;
}

const oplab_op_v1 kOps[] = {{"roi_align", OPLAB_DTYPE_FLOAT64, 0}};
const oplab_plugin_v1 kPlugin = {OPLAB_PLUGIN_ABI_VERSION, "my-roi-align", "roi_align forward in double (consumer example)",
                                 1, kOps, evaluate};

}  // namespace

OPLAB_PLUGIN_EXPORT const oplab_plugin_v1* oplab_plugin_v1_entry(void) { return &kPlugin; }
