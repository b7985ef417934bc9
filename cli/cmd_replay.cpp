// `oplab replay FILE [--backend B]... [--against A] [--property P]... [--timeout S] [--no-fork]`
// Re-runs a saved case (a case file, or a failure record of `oplab fuzz`) and says whether it
// still fails. A record brings its backend, oracle and property; options override them. A bare
// case file brings none: beside its record (DIR/failures/ID.case.json with DIR/failures/ID.json)
// it is replayed on the record's, and said so; elsewhere --backend is required, so that a
// saved failure is never "passes" merely because it ran on ref.
// Exit: 0 passes now, 1 still fails, 2 bad command line or unknown name, 5 the file is not a
// case or record.
#include <algorithm>
#include <filesystem>
#include <iostream>

#include "cli/builtin_backends.h"
#include "cli/commands.h"
#include "cli/external_cli.h"
#include "cli/names.h"
#include "core/case_io.h"
#include "fuzz/arg_parse.h"
#include "fuzz/replay.h"
#include "fuzz/replay_command.h"

namespace oplab::cli {

namespace {

struct Args {
  std::string file, against, timeout = "10";
  std::vector<std::string> backends, properties;
  bool no_fork = false;
};

int usage_error(const std::string& line) {
  std::cerr << line << '\n';
  return kUsage;
}

bool known(const std::vector<std::string>& names, const std::string& name) {
  return std::find(names.begin(), names.end(), name) != names.end();
}

// The failure record a bare case file sits beside (DIR/failures/ID.case.json ->
// DIR/failures/ID.json), or null when there is none (or it is not a record).
json record_beside(const std::string& case_file) {
  namespace fs = std::filesystem;
  const std::string suffix = ".case.json";
  const std::string name = fs::path(case_file).filename().string();
  if (name.size() <= suffix.size() || name.compare(name.size() - suffix.size(), suffix.size(), suffix) != 0) return nullptr;
  const fs::path record = fs::path(case_file).parent_path() / (name.substr(0, name.size() - suffix.size()) + ".json");
  std::error_code ec;
  if (!fs::is_regular_file(record, ec)) return nullptr;
  try {
    json j = read_json_file(record.string());
    if (j.is_object() && j.value("kind", std::string()) == "oplab-fuzz-failure" && j.contains("backend") &&
        j["backend"].is_string()) {
      j["path"] = record.string();
      return j;
    }
  } catch (const std::exception&) {
  }
  return nullptr;
}

// A record found on an external backend (its "backend_origin") that this run does not have
// under that name: replaying it on anything else would say nothing about it.
std::string external_missing(const json& record, const std::vector<std::string>& backends) {
  const std::string name = record.value("backend", std::string());
  const std::string origin = record.value("backend_origin", std::string());
  if (origin.empty() || known(backends, name)) return "";
  return "replay: the record was found on the external backend " + name + " (" + origin + "); register it again to replay (" +
         fuzz::reregister_option(name, origin) + ")";
}

int run(const Args& a, const std::vector<std::string>& extras) {
  if (!extras.empty()) return usage_error("replay: unexpected argument \"" + echo_name(extras[0]) + "\" (see oplab replay --help)");
  if (a.file.empty()) return usage_error("replay: give the case file or failure record to replay");
  // Every name is checked before any work.
  const std::vector<std::string> backends = backend_names(), properties = property_names();
  for (const auto& b : a.backends)
    if (!known(backends, b)) return usage_error(unknown_name("replay", "backend", b, backends));
  if (!a.against.empty() && !known(backends, a.against))
    return usage_error(unknown_name("replay", "oracle (--against)", a.against, backends));
  for (const auto& p : a.properties)
    if (p != "all" && !known(properties, p)) return usage_error(unknown_name("replay", "property", p, properties, "or all"));

  fuzz::ReplayOptions o;
  o.file = a.file;
  o.backends = a.backends;
  o.against = a.against;
  o.properties = a.properties;
  std::string err;
  if (!fuzz::parse_seconds(a.timeout, &o.isolation.timeout_s, &err)) return usage_error("replay: --timeout " + err);
  if (o.backends.empty()) {
    json file;
    try {
      file = read_json_file(a.file);
    } catch (const FormatError& e) {
      std::cerr << e.what() << '\n';
      return kBadFile;
    }
    const bool is_record = file.is_object() && file.value("kind", std::string()) == "oplab-fuzz-failure";
    if (is_record) {
      if (file.contains("backend") && file["backend"].is_string()) o.backends = {file["backend"].get<std::string>()};
      if (const std::string why = external_missing(file, backends); !why.empty()) return usage_error(why);
      if (o.against.empty() && file.contains("against") && file["against"].is_string()) o.against = file["against"].get<std::string>();
    } else {
      const json record = record_beside(a.file);
      if (record.is_null())
        return usage_error("replay: " + echo_name(a.file) +
                           " is a bare case (no failure record beside it): name the backend to replay it on with "
                           "--backend B (see `oplab backends`)");
      o.backends = {record["backend"].get<std::string>()};
      if (const std::string why = external_missing(record, backends); !why.empty()) return usage_error(why);
      if (o.against.empty() && record.contains("against") && record["against"].is_string())
        o.against = record["against"].get<std::string>();
      if (o.properties.empty() && record.contains("property") && record["property"].is_string())
        o.properties = {record["property"].get<std::string>()};
      std::cout << "replaying on " << o.backends[0] << (o.properties.empty() ? "" : ", property " + o.properties[0])
                << (o.against.empty() ? "" : ", against " + o.against) << ": from the failure record beside it, "
                << record["path"].get<std::string>() << '\n';
    }
  }
  // One case: a fresh process for it, as strict as isolation gets, costs nothing noticeable.
  o.isolation.mode = a.no_fork ? fuzz::IsolationMode::None : fuzz::IsolationMode::PerCase;
  // The backends it will run on (the record's included) must exist in this build and run here.
  std::vector<std::string> to_run = o.backends;
  if (!o.against.empty()) to_run.push_back(o.against);
  for (const auto& name : to_run) {
    if (!known(backends, name))
      return usage_error(unknown_name("replay", "backend", name, backends) + " (named by the failure record)");
    if (auto why = builtin_backends().find(name)->unavailable_reason()) {
      std::cerr << "replay: backend " << name << " cannot run here: " << *why << '\n';
      return kUnavailable;
    }
  }
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
  sub->add_option("--backend,-b", a->backends, "backend to run it on (repeatable; default: the record's; required for a case file without a record beside it)");
  sub->add_option("--against", a->against, "oracle of the differential property (default: the record's, or ref)");
  sub->add_option("--property,-p", a->properties, "property to check (repeatable; default: the record's, or all)");
  sub->add_option("--timeout", a->timeout, "seconds before an evaluation counts as hung (default 10)")->type_name("SECONDS");
  sub->add_flag("--no-fork", a->no_fork, "evaluate in-process");
  auto ext = std::make_shared<ExternalArgs>();
  add_external_options(sub, *ext);
  sub->callback([a, ext, sub] {
    if (const std::string bad = install_external_backends(*ext, "replay", ""); !bad.empty()) {
      std::cerr << bad << '\n';
      set_exit_code(kUsage);
      return;
    }
    set_exit_code(run(*a, sub->remaining()));
  });
}

static const CommandRegistrar registrar(41, add_replay);

}  // namespace oplab::cli
