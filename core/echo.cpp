#include "core/echo.h"

#include <cstdio>

namespace oplab {

namespace {

// Appends s made printable: the JSON escapes for the common controls, \xNN for the rest.
void append_printable(std::string& out, std::string_view s) {
  for (unsigned char ch : s) {
    switch (ch) {
      case '\n': out += "\\n"; break;
      case '\r': out += "\\r"; break;
      case '\t': out += "\\t"; break;
      default:
        if (ch < 0x20 || ch == 0x7f) {
          char buf[8];
          std::snprintf(buf, sizeof buf, "\\x%02x", unsigned(ch));
          out += buf;
        } else {
          out += char(ch);
        }
    }
  }
}

// The longest prefix of s of at most n bytes that does not end inside a UTF-8 sequence.
std::string_view utf8_prefix(std::string_view s, size_t n) {
  if (n >= s.size()) return s;
  // Back off continuation bytes (10xxxxxx) so that the cut falls before a lead byte.
  while (n > 0 && (static_cast<unsigned char>(s[n]) & 0xC0) == 0x80) --n;
  return s.substr(0, n);
}

std::string capped(std::string_view s, size_t max) {
  std::string out;
  if (s.size() <= max) {
    append_printable(out, s);
    if (out.size() <= max + 16) return out;  // a few escapes more is still short
    out.clear();
  }
  const std::string tail = "\xE2\x80\xA6(" + std::to_string(s.size()) + " bytes)";  // "…(N bytes)"
  const size_t keep = max > tail.size() + 8 ? max - tail.size() : 8;
  append_printable(out, utf8_prefix(s, keep));
  if (out.size() > keep + 16) out = std::string(utf8_prefix(out, keep));
  return out + tail;
}

}  // namespace

std::string echo(std::string_view s, size_t max) { return capped(s, max); }

std::string echo_json(const nlohmann::json& v, size_t max) {
  return capped(v.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace), max);
}

std::string one_line(std::string_view msg, size_t max) { return capped(msg, max); }

}  // namespace oplab
