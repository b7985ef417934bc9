// `oplab backends`: what is built in, its role (core/backend.h), and whether it can run on this machine.
#include <iomanip>
#include <iostream>

#include "cli/builtin_backends.h"
#include "cli/commands.h"
#include "cli/external_cli.h"
#include "core/op_desc.h"
#include "peer/onnxruntime_backend.h"
#include "peer/opencv_backend.h"
#include "peer/torchvision_backend.h"

namespace oplab::cli {

static void add_backends(CLI::App& app) {
  auto* sub = app.add_subcommand("backends", "list the built-in backends and whether each can run here");
  auto ext = std::make_shared<ExternalArgs>();
  add_external_options(sub, *ext);
  sub->callback([ext] {
    if (const std::string bad = install_external_backends(*ext, "backends", ""); !bad.empty()) {
      std::cerr << bad << '\n';
      set_exit_code(kUsage);
      return;
    }
    std::cout << std::left << std::setw(32) << "backend" << std::setw(16) << "role" << std::setw(5) << "runs"
              << "what it is\n";
    // An external backend named on this command line that cannot run is the answer asked for:
    // exit 4 (as every verb that would use it), the listing printed all the same.
    std::vector<std::string> external_down;
    for (Backend* b : builtin_backends().all()) {
      const auto why = b->unavailable_reason();
      if (why && !b->origin().empty()) external_down.push_back(b->name() + ": " + *why);
      std::cout << std::left << std::setw(32) << b->name() << std::setw(16) << backend_role_name(b->role())
                << std::setw(5) << (why ? "no" : "yes") << (why ? *why : b->description()) << '\n';
      // External backends: what runs, and the ops they declare with dtype and backward.
      if (!b->origin().empty() && !why) {
        std::cout << "    " << b->origin() << "\n    ops:";
        for (const std::string& op : op_names()) {
          Case c;
          c.op = op;
          if (b->unsupported_reason(c)) continue;
          std::cout << ' ' << op << " (" << dtype_name(b->dtype(op)) << (b->computes_grads(op) ? "" : ", forward only")
                    << ")";
        }
        std::cout << '\n';
      }
    }
    // The peer's versions (`oplab --version` points here: asking them starts Python and torch,
    // which listing the backends has just done).
    if (auto v = torchvision_versions(); v && v->is_object()) {
      std::cout << "\ntorchvision peer:";
      for (const char* k : {"torchvision", "torch", "python"})
        if (v->contains(k) && (*v)[k].is_string()) std::cout << ' ' << k << ' ' << (*v)[k].get<std::string>();
      std::cout << '\n';
    }
    std::cout << "onnxruntime peer: "
              << (onnxruntime_missing() ? *onnxruntime_missing() : "onnxruntime-node " + onnxruntime_version().value_or("?"))
              << "\nopencv peer: " << (opencv_version() ? "OpenCV " + *opencv_version() : std::string("not built (no libopencv-dev)"))
              << '\n';
    for (const std::string& down : external_down) std::cerr << "backends: cannot run here: " << down << '\n';
    if (!external_down.empty()) set_exit_code(kUnavailable);
  });
}

static const CommandRegistrar registrar(20, add_backends);

}  // namespace oplab::cli
