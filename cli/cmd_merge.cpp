// `oplab merge DIR... --out DIR`: join the folders of a campaign run as shards
// (`oplab fuzz --shard K/N`) into one report (fuzz/merge.h).
// Exit: 0 merged (all shards present and finished), 1 merged but partial (a shard missing or
// interrupted), 2 bad command line or folders that do not belong together, 5 unreadable file.
#include <iostream>

#include "cli/commands.h"
#include "core/case.h"
#include "fuzz/merge.h"

namespace oplab::cli {

namespace {

struct Args {
  std::vector<std::string> dirs;
  std::string out;
};

int usage_error(const std::string& line) {
  std::cerr << line << '\n';
  return kUsage;
}

int run(const Args& a, const std::vector<std::string>& extras) {
  if (!extras.empty()) return usage_error("merge: unexpected argument \"" + extras[0] + "\" (see oplab merge --help)");
  if (a.dirs.empty()) return usage_error("merge: give the campaign folders to join");
  if (a.out.empty()) return usage_error("merge: --out DIR is required");
  nlohmann::json s;
  try {
    s = fuzz::merge_campaigns(a.dirs, a.out);
  } catch (const std::invalid_argument& e) {
    return usage_error(e.what());
  } catch (const FormatError& e) {
    std::cerr << e.what() << '\n';
    return kBadFile;
  } catch (const std::exception& e) {
    std::cerr << "merge: " << e.what() << '\n';
    return kFailed;
  }
  std::cout << "merged " << s["shards"].size() << " shard(s): " << s["cases"].value("total", 0) << " cases, "
            << s["failures"].size() << " failures, status " << s["status"].get<std::string>();
  if (!s["missing_shards"].empty()) std::cout << ", missing shards " << s["missing_shards"].dump();
  std::cout << "; summary: " << a.out << "/summary.json\n";
  return s["status"] == "finished" ? kOk : kFailed;
}

}  // namespace

static void add_merge(CLI::App& app) {
  auto a = std::make_shared<Args>();
  auto* sub = app.add_subcommand("merge", "join the reports of a campaign's shards into one");
  sub->allow_extras();
  sub->add_option("dirs", a->dirs, "campaign folders (one per shard)");
  sub->add_option("--out,-o", a->out, "folder to write the joined report to");
  sub->callback([a, sub] { set_exit_code(run(*a, sub->remaining())); });
}

static const CommandRegistrar registrar(42, add_merge);

}  // namespace oplab::cli
