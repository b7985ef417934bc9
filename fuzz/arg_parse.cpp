#include "fuzz/arg_parse.h"

#include <cctype>
#include <cerrno>
#include <cmath>
#include <cstdlib>

namespace oplab::fuzz {

namespace {
// A bad value as it may be echoed in a one-line error: at most 60 characters.
std::string shown(const std::string& s) {
  return s.size() <= 60 ? s : s.substr(0, 57) + "...(" + std::to_string(s.size() - 57) + " more chars)";
}
}  // namespace


bool parse_seconds(const std::string& s, double* out, std::string* error) {
  char* end = nullptr;
  errno = 0;
  const double v = s.empty() ? NAN : std::strtod(s.c_str(), &end);
  if (s.empty() || *end != '\0' || errno != 0 || !std::isfinite(v) || v <= 0) {
    *error = "must be a positive number of seconds, got \"" + shown(s) + "\"";
    return false;
  }
  *out = v;
  return true;
}

bool parse_uint(const std::string& s, uint64_t* out, std::string* error, bool allow_zero) {
  bool digits = !s.empty() && s.size() <= 19;
  for (char ch : s) digits &= std::isdigit(static_cast<unsigned char>(ch)) != 0;
  const uint64_t v = digits ? std::strtoull(s.c_str(), nullptr, 10) : 0;
  if (!digits || (!allow_zero && v == 0)) {
    *error = std::string("must be a ") + (allow_zero ? "non-negative" : "positive") + " integer, got \"" + shown(s) + "\"";
    return false;
  }
  *out = v;
  return true;
}

}  // namespace oplab::fuzz
