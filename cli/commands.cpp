#include "cli/commands.h"

#include <algorithm>
#include <cctype>
#include <string>
#include <utility>
#include <vector>

namespace oplab::cli {

const char* const kExitCodesHelp =
    "Exit codes (every verb): 0 clean; 1 findings (failures that count); 2 usage or invalid input\n"
    "(unknown op, backend, shape or property, bad option value, malformed case or one that breaks\n"
    "a rule); 3 unsupported by the backend; 4 the backend cannot run here; 5 not a case or record\n"
    "file; 70 internal error (one line on stderr); 130 interrupted.";

namespace {
std::vector<std::pair<int, AddCommand>>& registry() {
  static std::vector<std::pair<int, AddCommand>> commands;  // built during static initialisation
  return commands;
}
int g_exit = kOk;
}  // namespace

CommandRegistrar::CommandRegistrar(int order, AddCommand add) { registry().emplace_back(order, add); }

void add_all_commands(CLI::App& app) {
  auto commands = registry();
  std::stable_sort(commands.begin(), commands.end(), [](const auto& a, const auto& b) { return a.first < b.first; });
  for (const auto& [order, add] : commands) add(app);
}

CLI::Validator whole_number(long long min, long long max) {
  return CLI::Validator(
      [min, max](std::string& text) -> std::string {
        const std::string shown = text.size() > 40 ? text.substr(0, 40) + "..." : text;
        const std::string want = "must be a whole number from " + std::to_string(min) + " to " + std::to_string(max) +
                                 ", got \"" + shown + "\"";
        const bool digits = !text.empty() && text.size() <= 18 &&
                            std::all_of(text.begin() + (text[0] == '-' && text.size() > 1), text.end(),
                                        [](unsigned char c) { return std::isdigit(c); });
        if (!digits) return want;
        const long long v = std::stoll(text);
        return v < min || v > max ? want : std::string();
      },
      "", "whole_number");
}

void set_exit_code(int code) { g_exit = code; }
int exit_code() { return g_exit; }

}  // namespace oplab::cli
