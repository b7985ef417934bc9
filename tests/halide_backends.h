#pragma once
// The Halide backends (halide-cpu, halide-cuda, halide-opencl: one per HalideDevice) that can
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

inline std::vector<Backend*> runnable_halide_backends(const std::string& tag = "") {
  std::vector<Backend*> v;
  for (HalideDevice d : kHalideDevices) {
    Backend* b = builtin_backends().find(halide_backend_name(d));
    if (!b) {
      ADD_FAILURE() << halide_backend_name(d) << " is not built in";
      continue;
    }
    if (auto why = b->unavailable_reason()) {
      if (!tag.empty()) std::cout << "[" << tag << "] " << b->name() << " skipped: " << *why << "\n";
      continue;
    }
    v.push_back(b);
  }
  return v;
}

}  // namespace oplab
