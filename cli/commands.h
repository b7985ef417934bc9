#pragma once
#include <CLI/CLI.hpp>

namespace oplab::cli {

// Exit codes shared by the subcommands.
enum Exit { kOk = 0, kFailed = 1, kInvalidCase = 2, kUnsupported = 3, kUnavailable = 4, kBadFile = 5 };

// Each cmd_*.cpp registers its subcommand with a file-scope CommandRegistrar, so adding a
// command means adding a file: main.cpp never changes.
using AddCommand = void (*)(CLI::App& app);
struct CommandRegistrar {
  CommandRegistrar(int order, AddCommand add);
};
void add_all_commands(CLI::App& app);  // in registration order (lowest first)

// Subcommand callbacks record their exit code here; main returns it.
void set_exit_code(int code);
int exit_code();

}  // namespace oplab::cli
