#include "variants/abi_reference.h"

#include <cstdio>
#include <memory>

#include "core/case.h"
#include "external/dtype_convert.h"
#include "reference/ref_backend.h"

namespace oplab {

const oplab_op_v1 kCheaterOps[1] = {{"roi_align", OPLAB_DTYPE_FLOAT64, 1}};

namespace {

Tensor read(const oplab_tensor_v1& t) {
  Tensor x(Shape(t.shape, t.shape + t.rank));
  decode_dtype(t.data, t.numel, DType::Float64, x.data.data());
  return x;
}

void write(const Tensor& x, oplab_tensor_v1& t) { encode_dtype(x.data.data(), t.numel, DType::Float64, t.data); }

}  // namespace

int32_t abi_reference(const oplab_call_v1* call, oplab_tensor_v1* out, oplab_tensor_v1* grads, char* message,
                      size_t message_size) {
  try {
    Case c;
    c.op = call->op;
    c.params = json::parse(call->params_json);
    for (int32_t i = 0; i < call->n_inputs; ++i) c.inputs[call->inputs[i].name] = read(call->inputs[i]);
    if (call->grad_output) c.grad_output = read(*call->grad_output);
    static const std::unique_ptr<Backend> ref = make_ref_backend();
    const Result r = ref->run(c);
    write(r.outputs.at("output"), out[0]);
    for (int32_t i = 0; i < call->n_grads; ++i) write(r.grads.at(grads[i].name), grads[i]);
    return OPLAB_OK;
  } catch (const std::exception& e) {
    std::snprintf(message, message_size, "%s", e.what());
    return OPLAB_FAILED;
  }
}

}  // namespace oplab
