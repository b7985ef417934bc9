#pragma once
// The Halide backends (halide-cpu, halide-cuda, halide-opencl: one per HalideDevice; and their
// float16 counterparts, halide-cpu-f16, ...) that can
// run on this machine, for the suites that run each of their checks on every one of them. A
// backend that cannot run here is left out, and with a non-empty `tag` its reason is printed
// ("[tag] halide-cuda skipped: no CUDA driver ..."), so a skip is never silent.
#include <gtest/gtest.h>

#include <iostream>
#include <string>
#include <vector>

#include "cli/builtin_backends.h"
#include "halide/halide_backend.h"

namespace oplab {

// The built-in backend `name` when it can run here; else nullptr, its reason printed under a
// non-empty `tag` (the caller then skips: GTEST_SKIP must stand in the test body).
inline Backend* runnable_backend(const std::string& name, const std::string& tag) {
  Backend* b = builtin_backends().find(name);
  if (!b) {
    ADD_FAILURE() << name << " is not built in";
    return nullptr;
  }
  if (auto why = b->unavailable_reason()) {
    if (!tag.empty()) std::cout << "[" << tag << "] " << name << " skipped: " << *why << "\n";
    return nullptr;
  }
  return b;
}

inline std::vector<Backend*> runnable_halide_backends(const std::string& tag = "",
                                                      HalideStorage storage = HalideStorage::Float32) {
  std::vector<Backend*> v;
  for (HalideDevice d : kHalideDevices)
    if (Backend* b = runnable_backend(halide_backend_name(d, storage), tag)) v.push_back(b);
  return v;
}

// The float16 ones (halide-cpu-f16, ...: the ops that have float16 kernels).
inline std::vector<Backend*> runnable_halide_f16_backends(const std::string& tag = "") {
  return runnable_halide_backends(tag, HalideStorage::Float16);
}

}  // namespace oplab
