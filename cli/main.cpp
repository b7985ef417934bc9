// oplab: one command-line program, subcommands over the library (SPEC §1).
#include <CLI/CLI.hpp>

#include <csignal>
#include <iostream>

#include "cli/commands.h"

int main(int argc, char** argv) {
  std::signal(SIGPIPE, SIG_IGN);  // a dead peer bridge must surface as an error, not kill us
  CLI::App app{"oplab: correctness harness and study lab for vision resampling operators"};
  app.require_subcommand(1);
  oplab::cli::add_all_commands(app);
  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    return app.exit(e);
  }
  return oplab::cli::exit_code();
}
