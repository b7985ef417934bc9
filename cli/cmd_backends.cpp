// `oplab backends`: what is built in, its role (core/backend.h), and whether it can run on this machine.
#include <iomanip>
#include <iostream>

#include "cli/builtin_backends.h"
#include "cli/commands.h"
#include "peer/torchvision_backend.h"

namespace oplab::cli {

static void add_backends(CLI::App& app) {
  auto* sub = app.add_subcommand("backends", "list the built-in backends and whether each can run here");
  sub->callback([] {
    std::cout << std::left << std::setw(32) << "backend" << std::setw(16) << "role" << std::setw(5) << "runs"
              << "what it is\n";
    for (Backend* b : builtin_backends().all()) {
      const auto why = b->unavailable_reason();
      std::cout << std::left << std::setw(32) << b->name() << std::setw(16) << backend_role_name(b->role())
                << std::setw(5) << (why ? "no" : "yes") << (why ? *why : b->description()) << '\n';
    }
    // The peer's versions (`oplab --version` points here: asking them starts Python and torch,
    // which listing the backends has just done).
    if (auto v = torchvision_versions(); v && v->is_object()) {
      std::cout << "\ntorchvision peer:";
      for (const char* k : {"torchvision", "torch", "python"})
        if (v->contains(k) && (*v)[k].is_string()) std::cout << ' ' << k << ' ' << (*v)[k].get<std::string>();
      std::cout << '\n';
    }
  });
}

static const CommandRegistrar registrar(20, add_backends);

}  // namespace oplab::cli
