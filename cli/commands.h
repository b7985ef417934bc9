#pragma once
#include <CLI/CLI.hpp>

namespace oplab::cli {

// Exit codes shared by the subcommands.
enum Exit { kOk = 0, kFailed = 1, kInvalidCase = 2, kUnsupported = 3, kUnavailable = 4, kBadFile = 5 };

void add_eval(CLI::App& app);
void add_backends(CLI::App& app);
void add_campaign(CLI::App& app);

// Subcommand callbacks record their exit code here; main returns it.
void set_exit_code(int code);
int exit_code();

}  // namespace oplab::cli
