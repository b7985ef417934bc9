#include "cli/campaign_cli.h"

#include <algorithm>
#include <iomanip>
#include <iostream>
#include <sstream>
#include <map>
#include <vector>

#include "cli/builtin_backends.h"
#include "cli/commands.h"
#include "cli/names.h"
#include "fuzz/arg_parse.h"
#include "fuzz/campaign_records.h"
#include "fuzz/progress.h"

namespace oplab::cli {

void add_engine_options(CLI::App* sub, EngineArgs& a) {
  sub->add_option("--seed,-s", a.seed, "campaign seed (default 1)")->type_name("INT");
  sub->add_option("--shard", a.shard,
                  "K/N: run the cases i with i mod N == K (default 0/1; join with oplab merge); auto: from a Slurm "
                  "array task or a Kubernetes Indexed Job (docs/shards/)")
      ->type_name("K/N|auto");
  sub->add_option("--isolation", a.isolation,
                  "worker: each backend in one long-lived process, replaced after a crash or hang (default); "
                  "fork: a fresh process per evaluation (slower, nothing shared between cases); none: in this "
                  "process (a crash ends the campaign)")
      ->type_name("worker|fork|none");
  sub->add_option("--timeout", a.timeout, "seconds before an evaluation counts as hung (default 10; isolated only)")
      ->type_name("SECONDS");
  sub->add_option("--shrink-time", a.shrink_time, "seconds of shrinking per failure (0: none, the case as drawn)")
      ->type_name("SECONDS");
  sub->add_option("--progress-every", a.progress_every, "seconds between progress lines when not a terminal")
      ->type_name("SECONDS");
}

std::string parse_engine_args(const EngineArgs& a, const std::string& verb, fuzz::CampaignOptions* o) {
  std::string err;
  if (!fuzz::parse_uint(a.seed, &o->seed, &err, true)) return verb + ": --seed " + err;
  if (!fuzz::parse_seconds(a.timeout, &o->isolation.timeout_s, &err)) return verb + ": --timeout " + err;
  const auto mode = fuzz::isolation_mode_from_name(a.isolation);
  if (!mode) return verb + ": --isolation \"" + a.isolation + "\" is not one of worker, fork, none";
  o->isolation.mode = *mode;
  if (a.shrink_time == "0") o->shrink_time_s = 0;
  else if (!a.shrink_time.empty() && !fuzz::parse_seconds(a.shrink_time, &o->shrink_time_s, &err))
    return verb + ": --shrink-time " + err;
  if (!fuzz::parse_seconds(a.progress_every, &o->progress_every_s, &err)) return verb + ": --progress-every " + err;
  const auto shard = fuzz::parse_shard(a.shard, &err);
  if (!shard) return verb + ": " + err;
  o->shard = *shard;
  return "";
}

namespace {

std::string fixed(double v, int precision) {
  std::ostringstream os;
  os << std::fixed << std::setprecision(precision) << v;
  return os.str();
}

// Every name the options give, checked against the built-in ones before any work.
std::string check_names(const fuzz::CampaignOptions& o, const std::string& verb) {
  auto check = [&](const std::vector<std::string>& given, const char* kind, const std::vector<std::string>& valid,
                   const char* extra) -> std::string {
    for (const auto& name : given)
      if (name != "all" && std::find(valid.begin(), valid.end(), name) == valid.end())
        return unknown_name(verb, kind, name, valid, extra);
    return "";
  };
  for (const std::string& bad : {check(o.ops, "op", op_names(), "or all"),
                                 check(o.backends, "backend", backend_names(), "or all"),
                                 check({o.against}, "backend", backend_names(), ""),
                                 check(o.properties, "property", property_names(), "or all")})
    if (!bad.empty()) return bad;
  return "";
}

}  // namespace

int run_and_finish(const fuzz::CampaignOptions& o, const std::string& verb, bool named) {
  if (const std::string bad = check_names(o, verb); !bad.empty()) {
    std::cerr << bad << '\n';
    return kUsage;
  }
  fuzz::CampaignResult r;
  try {
    r = fuzz::run_campaign(o, builtin_backends(), std::cout);
  } catch (const std::invalid_argument& e) {
    std::string what = e.what();  // the engine speaks as "fuzz: ..."
    if (what.rfind("fuzz: ", 0) == 0) what = verb + ": " + what.substr(6);
    std::cerr << what << '\n';
    return kUsage;
  } catch (const BackendUnavailable& e) {  // a backend named on the command line cannot run here
    std::string what = e.what();
    if (what.rfind("fuzz: ", 0) == 0) what = verb + ": " + what.substr(6);
    std::cerr << what << '\n';
    return kUnavailable;
  } catch (const std::exception& e) {
    std::cerr << verb << ": " << e.what() << '\n';
    return kFailed;
  }
  std::cout << '\n';
  fuzz::print_records(std::cout, r.summary.at("records"));
  for (const auto& [name, why] : r.summary.at("unavailable_backends").items())
    std::cout << "not run: backend " << name << ": " << why.get<std::string>() << '\n';
  // Expected departures, one line per backend (their cases are in the folder): a seeded bug
  // failing means the harness caught it; a study variant departs from the reference by design.
  std::map<std::string, std::vector<const fuzz::FailureSummary*>> expected;
  for (const auto& f : r.failures) {
    const Backend* b = builtin_backends().find(f.backend);
    if (b && b->role() != BackendRole::Implementation) expected[f.backend].push_back(&f);
  }
  for (const auto& [name, list] : expected) {
    const Backend* b = builtin_backends().find(name);
    const fuzz::FailureSummary& first = *list.front();
    std::cout << (b->role() == BackendRole::SeededBug ? "seeded bug caught: " : "study variant departs: ") << name << ", "
              << list.size() << " failing cases (first: " << first.property << " on " << first.op << ": "
              << first.detail.substr(0, 120) << ")\n";
  }
  const nlohmann::json& findings = r.summary.at("findings");
  std::cout << (r.interrupted ? "interrupted" : "finished") << ": " << r.cases << " cases, " << r.checks << " checks, "
            << r.failures.size() << " failing cases, " << findings.size() << " records over their flip budget in "
            << fixed(r.seconds, 1)
            << " s (" << fixed(fuzz::fuzz_rate(r.cases, r.seconds, r.shrink_seconds), 1) << " cases/s, shrinking "
            << fixed(100 * fuzz::shrink_share(r.seconds, r.shrink_seconds), 0) << "%); summary: " << o.out << "/summary.json\n";
  FailureTally tally;
  for (const auto& f : r.failures) tally.add(builtin_backends().find(f.backend), named);
  for (const auto& f : findings) tally.add(builtin_backends().find(f.at("backend").get<std::string>()), named);
  std::cout << tally.describe() << '\n';
  if (r.interrupted) return kInterrupted;
  return tally.counted ? kFailed : kOk;
}

}  // namespace oplab::cli
