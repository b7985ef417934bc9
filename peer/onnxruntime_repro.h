#pragma once
// The onnxruntime peer's standalone reproduction scripts (core/repro.h, peer/onnxruntime_repro.cpp).
#include <string>

#include "core/backend.h"

namespace oplab {

// `r` as a Node script running `model` — the bridge's `--model` answer for r.c, {"model":
// base64, "feeds": {...}} — with onnxruntime-node; `version` for its header.
ReproScript onnxruntime_repro(const ReproRequest& r, const json& model, const std::string& version);

}  // namespace oplab
