// The machine, versions, seeds and commands: what a reader needs to reproduce every figure.
#include <fstream>
#include <sstream>
#include <thread>

#include "notebooks-cpp/page.h"
#include "reports/sections.h"

namespace oplab::report {

namespace {

std::string first_line_with(const std::string& file, const std::string& key) {
  std::ifstream f(file);
  std::string line;
  while (std::getline(f, line))
    if (line.rfind(key, 0) == 0) return line.substr(line.find(':') + 1);
  return "unknown";
}

}  // namespace

json machine_section(const json& inputs, const std::string& pages, const std::string& command) {
  nb::Page page(pages, "reproduce", "Machine, versions and commands", "What produced these figures, and how to run it again?");
  const std::string cpu = first_line_with("/proc/cpuinfo", "model name");
  const std::string mem = first_line_with("/proc/meminfo", "MemTotal");
  std::ostringstream compiler;
#if defined(__clang__)
  compiler << "clang " << __clang_version__;
#elif defined(__GNUC__)
  compiler << "g++ " << __VERSION__;
#endif
  const std::string peer = inputs.contains("peer_versions") ? inputs["peer_versions"].dump() : "not recorded";
  page.answer("Built with " + compiler.str() + " and Halide 14 on" + cpu + " (" + std::to_string(std::thread::hardware_concurrency()) +
              " hardware threads); peer " + peer + ".");
  std::vector<std::vector<std::string>> rows = {{"CPU", cpu},
                                                {"hardware threads", std::to_string(std::thread::hardware_concurrency())},
                                                {"memory", mem},
                                                {"compiler", compiler.str()},
                                                {"Halide", "14 (Debian libhalide14-0-dev)"},
                                                {"peer", peer}};
  for (const auto& [k, v] : inputs.items())
    if (k != "peer_versions") rows.push_back({k, v.is_string() ? v.get<std::string>() : v.dump()});
  page.table({"what", "value"}, rows);
  page.text("Commands (from a clone, Debian 12):\n\n```\nbash scripts/main.sh        # campaign, fuzz, gradcheck, bench, "
            "notebooks, this report\n" +
            (command.empty() ? std::string() : command + "\n") + "```");
  page.write();
  return json{{"name", "reproduce"}, {"cpu", cpu}, {"compiler", compiler.str()}};
}

json missing_section(const std::string& name, const std::string& title, const std::string& what, const std::string& pages) {
  nb::Page page(pages, name, title, "What did `" + what + "` find?");
  page.answer("Not run: no output of `" + what + "` was found when this report was built.");
  page.write();
  return json{{"name", name}, {"missing", what}};
}

}  // namespace oplab::report
