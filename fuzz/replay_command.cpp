#include "fuzz/replay_command.h"

#include <cctype>

namespace oplab::fuzz {

std::string shell_word(const std::string& s) {
  bool plain = !s.empty();
  for (char ch : s)
    if (!(std::isalnum(static_cast<unsigned char>(ch)) || std::string("/._-+=:,@%").find(ch) != std::string::npos))
      plain = false;
  if (plain) return s;
  std::string q = "'";
  for (char ch : s) q += ch == '\'' ? std::string("'\\''") : std::string(1, ch);
  return q + "'";
}

std::string reregister_option(const std::string& backend, const std::string& origin) {
  if (origin.rfind("exec: ", 0) == 0) return "--exec " + shell_word(backend + "=" + origin.substr(6));
  if (origin.rfind("plugin: ", 0) == 0) return "--plugin " + shell_word(origin.substr(8));
  return "";
}

std::string replay_command(const std::string& record_path, const std::string& backend, const std::string& origin) {
  const std::string option = reregister_option(backend, origin);
  return "oplab replay " + shell_word(record_path) + (option.empty() ? "" : " " + option);
}

}  // namespace oplab::fuzz
