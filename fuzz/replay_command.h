#pragma once
// The command a user runs to replay a failure record, as printed by campaigns and written into
// records: `oplab replay PATH`, plus the option that registers the backend again when it was an
// external one (its origin, external/: "exec: COMMAND" or "plugin: PATH") — without it the
// replay would not know the backend's name.
#include <string>

namespace oplab::fuzz {

// "--plugin PATH" or "--exec NAME=COMMAND", quoted for a POSIX shell; "" for a built-in backend
// (an empty origin).
std::string reregister_option(const std::string& backend, const std::string& origin);

std::string replay_command(const std::string& record_path, const std::string& backend, const std::string& origin);

// `s` as one word of a POSIX shell command line: as it is when it holds nothing the shell would
// read, else in single quotes.
std::string shell_word(const std::string& s);

}  // namespace oplab::fuzz
