// `oplab backends`: what is built in, its role (core/backend.h), and whether it can run on this machine.
#include <iomanip>
#include <iostream>

#include "cli/builtin_backends.h"
#include "cli/commands.h"

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
  });
}

static const CommandRegistrar registrar(20, add_backends);

}  // namespace oplab::cli
