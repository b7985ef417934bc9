// `oplab replay FILE [--backend B]... [--against A] [--property P]... [--timeout S] [--no-fork]`
// Re-runs a saved case (a case file, or a failure record of `oplab fuzz`) and says whether it
// still fails. A record brings its backend, oracle and property; options override them.
// Exit: 0 passes now, 1 still fails, 2 bad command line, 5 the file is not a case or record.
#include <iostream>

#include "cli/builtin_backends.h"
#include "cli/commands.h"
#include "fuzz/arg_parse.h"
#include "fuzz/replay.h"

namespace oplab::cli {

namespace {

struct Args {
  std::string file, against, timeout = "10";
  std::vector<std::string> backends, properties;
  bool no_fork = false;
};

int usage_error(const std::string& line) {
  std::cerr << line << '\n';
  return 2;
}

int run(const Args& a, const std::vector<std::string>& extras) {
  if (!extras.empty()) return usage_error("replay: unexpected argument \"" + extras[0] + "\" (see oplab replay --help)");
  if (a.file.empty()) return usage_error("replay: give the case file or failure record to replay");
  fuzz::ReplayOptions o;
  o.file = a.file;
  o.backends = a.backends;
  o.against = a.against;
  o.properties = a.properties;
  o.isolation.fork = !a.no_fork;
  std::string err;
  if (!fuzz::parse_seconds(a.timeout, &o.isolation.timeout_s, &err)) return usage_error("replay: --timeout " + err);
  fuzz::ReplayOutcome r;
  try {
    r = fuzz::replay_file(o, builtin_backends());
  } catch (const FormatError& e) {
    std::cerr << e.what() << '\n';
    return kBadFile;
  } catch (const std::invalid_argument& e) {
    return usage_error(e.what());
  } catch (const std::exception& e) {
    std::cerr << "replay: " << e.what() << '\n';
    return kFailed;
  }
  if (!r.record.is_null())
    std::cout << "record " << r.record.value("id", std::string("?")) << ": " << r.record.value("property", std::string("?"))
              << " failed on " << r.record.value("backend", std::string("?")) << ": "
              << r.record.value("detail", std::string()) << '\n';
  for (const auto& c : r.checks) {
    std::cout << "  " << c.property << " on " << c.backend << ": " << compare::verdict_name(c.result.verdict);
    if (!c.result.detail.empty()) std::cout << " (" << c.result.detail << ")";
    std::cout << '\n';
  }
  std::cout << (r.still_fails ? "still fails" : "passes") << '\n';
  return r.still_fails ? kFailed : kOk;
}

}  // namespace

static void add_replay(CLI::App& app) {
  auto a = std::make_shared<Args>();
  auto* sub = app.add_subcommand("replay", "re-run a saved case or failure record and say whether it still fails");
  sub->allow_extras();
  sub->add_option("file", a->file, "a case file or a failure record (DIR/failures/ID.json)");
  sub->add_option("--backend,-b", a->backends, "backend to run it on (repeatable; default: the record's, or ref)");
  sub->add_option("--against", a->against, "oracle of the differential property (default: the record's, or ref)");
  sub->add_option("--property,-p", a->properties, "property to check (repeatable; default: the record's, or all)");
  sub->add_option("--timeout", a->timeout, "seconds before an evaluation counts as hung (default 10)");
  sub->add_flag("--no-fork", a->no_fork, "evaluate in-process");
  sub->callback([a, sub] { set_exit_code(run(*a, sub->remaining())); });
}

static const CommandRegistrar registrar(41, add_replay);

}  // namespace oplab::cli
