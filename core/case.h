#pragma once
// A case is one op invocation (SPEC §1); a result is what a backend returns for it.
#include <map>
#include <optional>
#include <stdexcept>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "core/tensor.h"

namespace oplab {

using json = nlohmann::json;

struct Case {
  std::string op;
  json params = json::object();
  std::map<std::string, Tensor> inputs;
  std::optional<Tensor> grad_output;  // present: evaluate the backward pass too

  bool has(const std::string& name) const { return inputs.count(name) != 0; }
  const Tensor& in(const std::string& name) const { return inputs.at(name); }
  const Tensor* opt(const std::string& name) const {
    auto it = inputs.find(name);
    return it == inputs.end() ? nullptr : &it->second;
  }
};

struct Result {
  std::string op;
  std::string backend;
  std::map<std::string, Tensor> outputs;  // "output"
  std::map<std::string, Tensor> grads;    // one per differentiable input the case supplies
  // The kernel paths this evaluation took, each one of Backend::kernel_paths(op): which of its
  // kernels the glue chose and which specialisation they ran (a campaign counts the cases that
  // reach each path). Empty for a backend that does not say.
  std::vector<std::string> kernel_paths;
};

// A case that breaks a rule of SPEC §7. The message is one line and starts with the op name,
// e.g. "roi_align: rois[3][0]=2 is not a batch index of input with N=2".
struct InvalidCase : std::runtime_error {
  using std::runtime_error::runtime_error;
};

// A valid case that a backend cannot evaluate (an op or mode the peer does not have).
struct Unsupported : std::runtime_error {
  using std::runtime_error::runtime_error;
};

// A backend that cannot run on this machine at all (no GPU, no Python peer).
struct BackendUnavailable : std::runtime_error {
  using std::runtime_error::runtime_error;
};

// The kernel's process crashed (a signal, a non-zero exit) or hung past its timeout: a failure
// of the case it was evaluating, recorded with "crashed": true (fuzz/isolate.h, external/).
struct KernelCrash : std::runtime_error {
  using std::runtime_error::runtime_error;
};

// Malformed JSON: not a case at all (wrong types, data length that does not fit the shape).
struct FormatError : std::runtime_error {
  using std::runtime_error::runtime_error;
};

}  // namespace oplab
