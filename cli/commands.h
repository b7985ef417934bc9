#pragma once
#include <CLI/CLI.hpp>

namespace oplab::cli {

// The exit-code contract of every verb (README "The CLI", `oplab --help`):
enum Exit {
  kOk = 0,            // clean: nothing that counts failed
  kFailed = 1,        // findings: failures that count (or an error writing the output)
  kUsage = 2,         // usage or invalid input: bad command line, unknown name, bad option value,
  kInvalidCase = 2,   //   a malformed case or one that breaks a rule (SPEC §7)
  kUnsupported = 3,   // the backend does not support this op or mode
  kUnavailable = 4,   // the backend cannot run here
  kBadFile = 5,       // the file is not a case or a failure record
  kInternal = 70,     // internal error: an exception escaped a verb (one line, never an abort)
  kInterrupted = 130  // interrupted (SIGINT/SIGTERM): what was found so far is kept
};

// The contract as printed at the foot of `oplab --help`.
extern const char* const kExitCodesHelp;

// Check of an integer option: a whole number from `min` to `max`, else one line
// ("--threads: must be a whole number from 1 to 1024, got \"abc\"").
CLI::Validator whole_number(long long min, long long max);

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
