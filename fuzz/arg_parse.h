#pragma once
// Number arguments of the fuzz commands, checked here so that a bad one gives one line
// ("--time must be a positive number of seconds, got \"abc\"") rather than a parser dump.
#include <cstdint>
#include <string>

namespace oplab::fuzz {

bool parse_seconds(const std::string& s, double* out, std::string* error);                 // finite, > 0
bool parse_uint(const std::string& s, uint64_t* out, std::string* error, bool allow_zero);  // decimal digits

}  // namespace oplab::fuzz
