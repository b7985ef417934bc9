#pragma once
// A standalone reproduction (`oplab repro`, docs/divergences.md): a short script in a peer's
// own terms (Python with torch, PIL or cv2 and numpy; Node for ONNX Runtime) that shows a
// disagreement with the spec without oplab, the reference's values written into it — what an
// upstream bug report needs. oplab builds the request (repro/repro_request.h); the peer, which
// knows its library's calls, writes the script (Backend::repro_script).
//
// Every script keeps one exit contract: 0 it shows what it claims; 1 it no longer does (the
// library changed); 2 it cannot run here (a package is missing).
#include <map>
#include <string>

#include "core/case.h"

namespace oplab {

struct ReproRequest {
  std::string subject;  // what it reproduces: "divergence NAME" or "failure record ID"
  std::string claim;    // one line: what the library does instead of the spec
  std::string command;  // the oplab command that wrote it
  Case c;               // the case exactly as the backend is sent it (compare::case_for)
  // Per tensor ("output", "grad_<input>"): the reference on c (for a uint8 kernel rounded half
  // up and clipped, SPEC §16), and what the claim says the library computes instead (the
  // reference on the divergence's equivalent case; empty when there is none).
  std::map<std::string, Tensor> spec, claimed;
  bool raises = false;  // the claim: the library raises on c
  // A largest difference above it is a disagreement; `claimed` within it is a match. Chosen
  // when the script is written, between the library's distances from spec and from claimed.
  double threshold = 0;
};

struct ReproScript {
  std::string text;
  std::string extension;    // ".py", ".js"
  std::string interpreter;  // "python3", "node": how CI runs it
};

}  // namespace oplab
