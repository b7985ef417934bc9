#include "cli/commands.h"

#include <algorithm>
#include <utility>
#include <vector>

namespace oplab::cli {

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

void set_exit_code(int code) { g_exit = code; }
int exit_code() { return g_exit; }

}  // namespace oplab::cli
