// oplab: one command-line program, subcommands over the library (SPEC §1). Every verb keeps
// one exit-code contract (cli/commands.h): a bad command line is one line and exit 2, and no
// exception ever escapes as an abort (exit 70, one line).
#include <CLI/CLI.hpp>

#include <unistd.h>

#include <algorithm>
#include <csignal>
#include <cstdlib>
#include <cstring>
#include <exception>
#include <iostream>
#include <stdexcept>
#include <string>
#include <thread>
#include <vector>

#include "cli/commands.h"
#include "cli/names.h"

#ifndef OPLAB_VERSION
#define OPLAB_VERSION "unknown"
#endif
#ifndef OPLAB_HALIDE_VERSION
#define OPLAB_HALIDE_VERSION "unknown"
#endif

namespace {

using namespace oplab::cli;

std::string version_text() {
  return std::string("oplab ") + OPLAB_VERSION + "\nHalide " + OPLAB_HALIDE_VERSION +
         "\ntorchvision: see `oplab backends` (asking the peer starts Python and torch)";
}

// One line for the last-resort handlers: the message's first line, capped.
std::string one_line(std::string s) {
  if (const auto nl = s.find('\n'); nl != std::string::npos) s = s.substr(0, nl);
  if (s.size() > 300) s = s.substr(0, 300) + "...";
  return s;
}

[[noreturn]] void internal_error(const std::string& what) {
  const std::string line = "oplab: internal error: " + one_line(what) + "\n";
  std::cout.flush();
  (void)!::write(2, line.data(), line.size());
  std::_Exit(kInternal);
}

// An exception thrown where nothing catches it (another thread, a noexcept function) would
// call std::terminate and abort: it becomes the same one line and exit 70.
[[noreturn]] void on_terminate() {
  if (auto e = std::current_exception()) {
    try {
      std::rethrow_exception(e);
    } catch (const std::exception& ex) {
      internal_error(ex.what());
    } catch (...) {
    }
  }
  internal_error("terminate called (an exception that is not a std::exception, or none)");
}

// The subcommand the user named (the last one parsed), for the one-line error.
std::string verb_of(const CLI::App& app) {
  std::string verb = "oplab";
  for (const CLI::App* sub : app.get_subcommands()) verb += " " + sub->get_name();
  return verb;
}

std::vector<std::string> verbs(CLI::App& app) {
  std::vector<std::string> names;
  for (const CLI::App* sub : app.get_subcommands([](CLI::App*) { return true; })) names.push_back(sub->get_name());
  return names;
}

bool is_verb(CLI::App& app, const std::string& word) {
  const std::vector<std::string> names = verbs(app);
  return std::find(names.begin(), names.end(), word) != names.end();
}

std::string unknown_verb(const std::string& verb, CLI::App& app, const std::string& word) {
  return unknown_name(verb, "verb", word, verbs(app)) + " (see oplab --help)";
}

}  // namespace

int main(int argc, char** argv) {
  std::signal(SIGPIPE, SIG_IGN);  // a dead peer bridge must surface as an error, not kill us
  std::set_terminate(on_terminate);
  CLI::App app{"oplab: correctness harness and study lab for vision resampling operators", "oplab"};
  app.require_subcommand(1);
  app.set_version_flag("--version", version_text(), "print the versions of oplab, Halide and where to find the peer's");
  app.footer(kExitCodesHelp);
  add_all_commands(app);

  std::vector<std::string> args(argv + 1, argv + argc);
  if (args.empty()) {  // nothing asked: the help, and a usage exit
    std::cerr << app.help();
    return kUsage;
  }
  if (args[0] == "help") {  // `oplab help [VERB]`
    if (args.size() == 1) {
      std::cout << app.help();
      return kOk;
    }
    if (!is_verb(app, args[1])) {
      std::cerr << unknown_verb("oplab help", app, args[1]) << '\n';
      return kUsage;
    }
    args = {args[1], "--help"};
  }
  // A word where the verb belongs that is none: named, with the closest verb, rather than
  // CLI11's "A subcommand is required" (options such as --version go on to the parser).
  if (args[0].rfind('-', 0) != 0 && !is_verb(app, args[0])) {
    std::cerr << unknown_verb("oplab", app, args[0]) << '\n';
    return kUsage;
  }
  try {
    // For tests/test_exit_codes.cpp: the last-resort handlers, on the main thread and another.
    if (const char* inject = std::getenv("OPLAB_TEST_INTERNAL_ERROR")) {
      if (std::string(inject) == "thread") std::thread([] { throw std::runtime_error("injected on a thread"); }).join();
      throw std::logic_error("injected");
    }
    try {
      std::vector<std::string> reversed(args.rbegin(), args.rend());  // CLI11 takes them last first
      app.parse(reversed);
    } catch (const CLI::CallForHelp& e) {
      return app.exit(e);
    } catch (const CLI::CallForAllHelp& e) {
      return app.exit(e);
    } catch (const CLI::CallForVersion& e) {
      return app.exit(e);
    } catch (const CLI::ParseError& e) {
      const std::string verb = verb_of(app);
      std::cerr << verb << ": " << one_line(e.what()) << " (see " << verb << " --help)\n";
      return kUsage;
    }
  } catch (const std::exception& e) {
    internal_error(e.what());
  } catch (...) {
    internal_error("an exception that is not a std::exception");
  }
  return exit_code();
}
