#pragma once
// Echoing what a user wrote (a name, a key, a value) inside a one-line error message: a hostile
// case may put 10 MB or a newline there. Every error message built from user text goes through
// these (docs/semantics.md, "Resource policy and hostile input").
#include <string>
#include <string_view>

#include <nlohmann/json.hpp>

namespace oplab {

// How much of one echoed string is shown.
inline constexpr size_t kEchoMax = 80;
// The most a whole one-line message may be (InvalidCase, FormatError).
inline constexpr size_t kMessageMax = 240;

// `s` made printable on one line (control characters as \n, \t, \xNN) and, when longer than
// `max` bytes, cut at a UTF-8 character boundary and followed by "…(N bytes)", N being the
// length of the original.
std::string echo(std::string_view s, size_t max = kEchoMax);

// A JSON value as it would be dumped, echoed (never throws, even on invalid UTF-8).
std::string echo_json(const nlohmann::json& v, size_t max = kEchoMax);

// A whole message held to one line of at most `max` bytes (the end cut as echo() cuts).
std::string one_line(std::string_view msg, size_t max = kMessageMax);

}  // namespace oplab
