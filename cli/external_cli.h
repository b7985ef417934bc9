#pragma once
// The external-backend options every verb that takes a backend accepts (docs/protocol.md):
// --exec NAME=COMMAND (repeatable), --plugin PATH (repeatable), --backends FILE (or the
// environment variable OPLAB_BACKENDS) and --exec-timeout SECONDS.
#include <string>

#include <CLI/CLI.hpp>

#include "external/registration.h"

namespace oplab::cli {

struct ExternalArgs {
  ExternalRequest request;
  std::string timeout = "10";
};

void add_external_options(CLI::App* sub, ExternalArgs& a);

// Adds the backends to the registry (cli/builtin_backends.h), their stderr logged under
// `log_dir` (empty: the temp folder). Returns "" or the one-line error "VERB: ..." (exit 2).
std::string install_external_backends(const ExternalArgs& a, const std::string& verb, const std::string& log_dir);

}  // namespace oplab::cli
