// `oplab fuzz`: a property-based fuzz campaign (fuzz/campaign.h) over ops x backends.
//   oplab fuzz --op OP|all --backend B|all [--against ref] (--time S | --cases N) [--seed S]
//              [--shard K/N] [--out DIR] [--keep-going] [--property P]... [--timeout S]
//              [--shrink-time S] [--no-fork] [--progress-every S]
// Exit: 0 no failure that counts, 1 failures (each shrunk and saved under DIR/failures; under
// `--backend all` only those of implementations count, cli/builtin_backends.h), 2 bad command
// line (one line on stderr), 130 interrupted (everything found so far is saved).
#include <algorithm>
#include <unistd.h>

#include <iostream>

#include "cli/builtin_backends.h"
#include "cli/commands.h"
#include "fuzz/arg_parse.h"
#include "fuzz/campaign.h"

namespace oplab::cli {

namespace {

struct Args {
  std::vector<std::string> ops, backends, properties;
  std::string against = "ref", time, cases, seed = "1", shard = "0/1", out = "out/fuzz", timeout = "10",
              shrink_time = "30", progress_every = "10";
  bool keep_going = false, no_fork = false;
};

int usage_error(const std::string& line) {
  std::cerr << line << '\n';
  return 2;
}

int run(const Args& a, const std::vector<std::string>& extras) {
  if (!extras.empty()) return usage_error("fuzz: unexpected argument \"" + extras[0] + "\" (see oplab fuzz --help)");
  fuzz::CampaignOptions o;
  std::string err;
  o.ops = a.ops.empty() ? std::vector<std::string>{"all"} : a.ops;
  o.backends = a.backends;
  o.against = a.against;
  o.properties = a.properties;
  o.out = a.out;
  o.keep_going = a.keep_going;
  o.isolation.fork = !a.no_fork;
  o.live_progress = ::isatty(STDOUT_FILENO);
  if (a.backends.empty()) return usage_error("fuzz: --backend is required (a name from `oplab backends`, or all)");
  if (a.time.empty() && a.cases.empty()) return usage_error("fuzz: give --time S or --cases N");
  if (!a.time.empty() && !fuzz::parse_seconds(a.time, &o.time_s.emplace(), &err)) return usage_error("fuzz: --time " + err);
  if (!a.cases.empty()) {
    uint64_t n = 0;
    if (!fuzz::parse_uint(a.cases, &n, &err, false)) return usage_error("fuzz: --cases " + err);
    o.cases = int64_t(n);
  }
  if (!fuzz::parse_uint(a.seed, &o.seed, &err, true)) return usage_error("fuzz: --seed " + err);
  if (!fuzz::parse_seconds(a.timeout, &o.isolation.timeout_s, &err)) return usage_error("fuzz: --timeout " + err);
  if (!fuzz::parse_seconds(a.shrink_time, &o.shrink_time_s, &err)) return usage_error("fuzz: --shrink-time " + err);
  if (!fuzz::parse_seconds(a.progress_every, &o.progress_every_s, &err))
    return usage_error("fuzz: --progress-every " + err);
  const auto shard = fuzz::parse_shard(a.shard, &err);
  if (!shard) return usage_error("fuzz: " + err);
  o.shard = *shard;

  fuzz::CampaignResult r;
  try {
    r = fuzz::run_campaign(o, builtin_backends(), std::cout);
  } catch (const std::invalid_argument& e) {
    return usage_error(e.what());
  } catch (const std::exception& e) {
    std::cerr << "fuzz: " << e.what() << '\n';
    return kFailed;
  }
  std::cout << (r.interrupted ? "interrupted" : "finished") << ": " << r.cases << " cases, " << r.checks << " checks, "
            << r.failures.size() << " failures in " << r.seconds << " s; summary: " << o.out << "/summary.json\n";
  FailureTally tally;
  const bool named = std::find(a.backends.begin(), a.backends.end(), "all") == a.backends.end();
  for (const auto& f : r.failures) tally.add(builtin_backends().find(f.backend), named);
  std::cout << tally.describe() << '\n';
  if (r.interrupted) return 130;
  return tally.counted ? kFailed : kOk;
}

}  // namespace

static void add_fuzz(CLI::App& app) {
  auto a = std::make_shared<Args>();
  auto* sub = app.add_subcommand("fuzz", "property-based fuzz campaign: shrinking, replayable failures, shards");
  sub->allow_extras();  // our own one-line error instead of CLI11's
  sub->add_option("--op", a->ops, "op to fuzz (repeatable), or all (default)");
  sub->add_option("--backend,-b", a->backends, "backend to test (repeatable), or all");
  sub->add_option("--against", a->against, "oracle of the differential property (default ref)");
  sub->add_option("--property,-p", a->properties, "property to check (repeatable), or all (default)");
  sub->add_option("--time,-t", a->time, "seconds to run (stops starting new cases)");
  sub->add_option("--cases,-n", a->cases, "cases per op (indices 0..N-1, split among shards)");
  sub->add_option("--seed,-s", a->seed, "campaign seed (default 1)");
  sub->add_option("--shard", a->shard, "K/N: run the cases i with i mod N == K (default 0/1)");
  sub->add_option("--out,-o", a->out, "output folder (default out/fuzz)");
  sub->add_flag("--keep-going,-k", a->keep_going, "continue after a failure");
  sub->add_option("--timeout", a->timeout, "seconds before an evaluation counts as hung (default 10)");
  sub->add_option("--shrink-time", a->shrink_time, "seconds of shrinking per failure (default 30)");
  sub->add_flag("--no-fork", a->no_fork, "evaluate in-process (faster; a crash ends the campaign)");
  sub->add_option("--progress-every", a->progress_every, "seconds between progress lines when not a terminal");
  sub->callback([a, sub] { set_exit_code(run(*a, sub->remaining())); });
}

static const CommandRegistrar registrar(40, add_fuzz);

}  // namespace oplab::cli
