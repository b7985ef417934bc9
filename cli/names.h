#pragma once
// Names checked before any work (README "The CLI"): an unknown op, backend, shape or property
// is one line on stderr that lists the valid names and, where one is close (edit distance at
// most 2), suggests it; the verb then exits kUsage.
#include <optional>
#include <string>
#include <vector>

namespace oplab::cli {

// Edit distance (insertions, deletions, substitutions; case-insensitive).
size_t edit_distance(const std::string& a, const std::string& b);

// The valid name closest to `name` within distance 2 (and closer than the name is long, so
// that "x" suggests nothing); the first in `valid` on ties. When none is that close, the one
// valid name that begins with `name` or that `name` begins with (3 characters at least), if
// exactly one does. nullopt otherwise.
std::optional<std::string> closest_name(const std::string& name, const std::vector<std::string>& valid);

// `name` as it may be echoed: at most 60 characters, the rest elided ("...(N more chars)").
std::string echo_name(const std::string& name);

// The one-line message (no newline): VERB: unknown KIND "NAME" (did you mean "X"?); valid: A, B, C
// `extra` is appended to the list ("or all"). `suggest_from` (default: `valid`) are the
// names a suggestion is drawn from, when they differ from those listed.
std::string unknown_name(const std::string& verb, const std::string& kind, const std::string& name,
                         const std::vector<std::string>& valid, const std::string& extra = "",
                         const std::vector<std::string>* suggest_from = nullptr);

// The names the CLI checks against.
std::vector<std::string> backend_names();  // every built-in backend, in `oplab backends` order
std::vector<std::string> op_names();       // every op, in registration order
std::vector<std::string> property_names(); // every fuzz property

}  // namespace oplab::cli
