// `oplab report`: the design-review report from the JSON the checks wrote (reports/report.h).
#include <filesystem>
#include <iostream>

#include "cli/commands.h"
#include "cli/names.h"
#include "reports/report.h"

namespace oplab::cli {

namespace {

void add_report(CLI::App& app) {
  auto opt = std::make_shared<report::Options>();
  auto* sub = app.add_subcommand("report", "build the HTML + Markdown report from campaign, gradcheck, fuzz, bench and notebook outputs");
  sub->add_option("--from,-f", opt->from, "folder the checks wrote into (default out; must exist)");
  sub->add_option("--out,-o", opt->out, "report folder (index.html, index.md, report.json, pages/; default out/report)");
  sub->add_option("--command", opt->command, "the command line that produced the inputs, for the reproduction page");
  sub->callback([opt] {
    std::error_code ec;
    if (!std::filesystem::is_directory(opt->from, ec)) {
      std::cerr << "report: --from " << echo_name(opt->from)
                << (std::filesystem::exists(opt->from, ec) ? " is not a folder" : ": no such folder")
                << " (give the folder the checks wrote into, e.g. out)\n";
      set_exit_code(kUsage);
      return;
    }
    try {
      const nlohmann::json r = report::build(*opt);
      std::cout << "report: " << opt->out << "/index.html (" << r["sections"].size() << " sections";
      if (!r["missing_inputs"].empty()) std::cout << "; not found: " << r["missing_inputs"].dump();
      std::cout << ")\n";
    } catch (const std::exception& e) {
      std::cerr << "report: " << e.what() << "\n";
      set_exit_code(kFailed);
    }
  });
}

const CommandRegistrar registrar(60, add_report);

}  // namespace

}  // namespace oplab::cli
