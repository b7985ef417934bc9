// `oplab fuzz`: a property-based fuzz campaign (fuzz/campaign.h) over ops x backends.
//   oplab fuzz --op OP|all --backend B|all [--against ref] (--time S | --cases N) [--seed S]
//              [--shard K/N] [--out DIR] [--keep-going] [--property P]... [--timeout S]
//              [--shrink-time S] [--isolation worker|fork|none] [--no-fork] [--no-batch]
//              [--progress-every S]
// Exit: 0 no failure that counts, 1 failures (each shrunk and saved under DIR/failures) or
// findings (boundary flips over budget); under `--backend all` only those of implementations
// count, cli/builtin_backends.h), 2 bad command line (one line on stderr), 130 interrupted
// (everything found so far is saved). `oplab campaign` is this engine with fixed settings.
#include <algorithm>
#include <unistd.h>

#include <iostream>

#include "cli/builtin_backends.h"
#include "cli/campaign_cli.h"
#include "cli/commands.h"
#include "cli/external_cli.h"
#include "fuzz/arg_parse.h"
#include "fuzz/campaign.h"

namespace oplab::cli {

namespace {

struct Args {
  std::vector<std::string> ops, backends, properties;
  std::string against = "ref", time, cases, out = "out/fuzz";
  EngineArgs engine;
  bool keep_going = false, no_fork = false, no_batch = false;
};

int usage_error(const std::string& line) {
  std::cerr << line << '\n';
  return kUsage;
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
  o.batch = !a.no_batch;
  o.live_progress = ::isatty(STDOUT_FILENO);
  if (a.backends.empty()) return usage_error("fuzz: --backend is required (a name from `oplab backends`, or all)");
  if (a.time.empty() && a.cases.empty()) return usage_error("fuzz: give --time S or --cases N");
  if (!a.time.empty() && !fuzz::parse_seconds(a.time, &o.time_s.emplace(), &err)) return usage_error("fuzz: --time " + err);
  if (!a.cases.empty()) {
    uint64_t n = 0;
    if (!fuzz::parse_uint(a.cases, &n, &err, false)) return usage_error("fuzz: --cases " + err);
    o.cases = int64_t(n);
  }
  EngineArgs engine = a.engine;
  if (a.no_fork) engine.isolation = "none";
  if (const std::string bad = parse_engine_args(engine, "fuzz", &o); !bad.empty()) return usage_error(bad);
  const bool named = std::find(a.backends.begin(), a.backends.end(), "all") == a.backends.end();
  o.quiet_expected_failures = !named;
  return run_and_finish(o, "fuzz", named);
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
  sub->add_option("--time,-t", a->time, "seconds to run (stops starting new cases)")->type_name("SECONDS");
  sub->add_option("--cases,-n", a->cases, "cases per op (indices 0..N-1, split among shards)")->type_name("INT");
  sub->add_option("--out,-o", a->out, "output folder (default out/fuzz)");
  sub->add_flag("--keep-going,-k", a->keep_going, "continue after a failure");
  sub->add_flag("--no-fork", a->no_fork, "same as --isolation none");
  sub->add_flag("--no-batch", a->no_batch,
                "send each evaluation to its worker alone, not a case's in one batch (same verdicts; to measure)");
  add_engine_options(sub, a->engine);  // --seed --shard --timeout --shrink-time (default 30) --progress-every
  auto ext = std::make_shared<ExternalArgs>();
  add_external_options(sub, *ext);
  sub->callback([a, ext, sub] {
    if (const std::string bad = install_external_backends(*ext, "fuzz", a->out); !bad.empty()) {
      std::cerr << bad << '\n';
      set_exit_code(kUsage);
      return;
    }
    set_exit_code(run(*a, sub->remaining()));
  });
}

static const CommandRegistrar registrar(40, add_fuzz);

}  // namespace oplab::cli
