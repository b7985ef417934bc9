#pragma once
// The external backends of one run, as the command line names them (docs/protocol.md):
// `--exec NAME=COMMAND`, `--plugin PATH`, and a backends file (`--backends FILE`, or the file
// the environment variable OPLAB_BACKENDS names when no --backends is given):
//
//   {"backends": [{"name": "mine", "exec": "python3 mine.py", "timeout": 20},
//                 {"plugin": "build/libmine.so"},
//                 {"name": "mine-broken", "exec": "python3 mine_broken.py", "role": "seeded-bug"}]}
//
// A file's exec commands run in the file's folder and its plugin paths are relative to it. An
// entry's role (implementation by default, seeded-bug, study-variant) says what its failures mean.
#include <string>
#include <vector>

#include "core/backend.h"

namespace oplab {

struct ExternalRequest {
  std::vector<std::string> exec;    // NAME=COMMAND
  std::vector<std::string> plugin;  // PATH
  std::string backends_file;        // empty: OPLAB_BACKENDS, if set
  double timeout_s = 10;            // per case, for exec backends without their own
  std::string log_dir;              // where exec backends' stderr goes (empty: the temp folder)
};

// Adds the named backends to `reg` (an Implementation unless a file's entry gives its role: its
// failures count). Throws
// std::invalid_argument with one line naming what is wrong, before anything is started: a
// malformed NAME=COMMAND, a name that is not [A-Za-z0-9._-]+, a name already taken (a built-in
// backend or another external one), an unreadable or malformed backends file, a plugin that
// cannot be loaded.
void add_external_backends(Registry& reg, const ExternalRequest& r);

}  // namespace oplab
