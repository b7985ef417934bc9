#pragma once
// A backend in a process of its own, spoken to over the line protocol (docs/protocol.md):
// `--exec NAME=COMMAND` runs `/bin/sh -c COMMAND` once, says hello, then sends one case per
// line and reads one answer per line. A process that dies, hangs past the timeout, or breaks
// the protocol fails the case it was evaluating (a death or a hang as a KernelCrash, recorded
// with "crashed": true) and is started afresh for the next case.
#include <memory>
#include <string>

#include "core/backend.h"

namespace oplab {

struct ExecSpec {
  std::string name;     // the backend's name in this run
  std::string command;  // run as /bin/sh -c COMMAND
  std::string cwd;      // where it runs (empty: the current directory)
  std::string log;      // the file its stderr is appended to
  double timeout_s = 10;  // per case; hello gets at least 30 s (an interpreter may import a lot)
  // What its failures mean (docs/protocol.md, "role" in a backends file): a kernel under test
  // by default; a seeded bug (a deliberately broken copy, whose failures prove the harness
  // catches it) or a study variant (a departure on purpose) counts apart.
  BackendRole role = BackendRole::Implementation;
};

std::unique_ptr<Backend> make_exec_backend(const ExecSpec& spec);

}  // namespace oplab
