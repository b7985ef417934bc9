#pragma once
// The torchvision peer's standalone reproduction scripts (core/repro.h, peer/torchvision_repro.cpp).
#include <string>

#include "core/backend.h"

namespace oplab {

// `r` as a Python script calling torch / torchvision in `dtype` (on the GPU when `cuda`);
// `versions` for its header ("torch 1.13.0, torchvision 0.14.0"); `bridge_dir` holds
// msda_pytorch.py, whose ms_deform_attn the script carries.
ReproScript torchvision_repro(const ReproRequest& r, DType dtype, bool cuda, const std::string& versions,
                              const std::string& bridge_dir);

}  // namespace oplab
