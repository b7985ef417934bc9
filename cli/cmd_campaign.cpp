// `oplab campaign`: the main job. The fuzz campaign engine (fuzz/campaign.h) in a fixed
// setting: the differential and determinism properties, every op, every backend that can run here against `ref`,
// cases 0..N-1 of each op (the same cases `oplab fuzz --cases N` draws), every failure kept,
// none shrunk unless asked. Prints the table of records and writes DIR/summary.json, the record
// schema `oplab fuzz` writes and the report reads (fuzz/campaign_records.h); each failing case
// is saved under DIR/failures/, replayable with `oplab replay`.
//   oplab campaign [--cases N] [--seed S] [--out DIR] [--op OP]... [--backend B]... [--shard K/N]
//                  [--isolation worker|fork|none] [--fork] [--timeout S] [--shrink-time S]
// Exit: as `oplab fuzz` (cli/campaign_cli.h): 0, 1 failures or findings that count, 2 bad
// command line, 130 interrupted.
#include <unistd.h>

#include <iostream>

#include "cli/builtin_backends.h"
#include "cli/campaign_cli.h"
#include "cli/commands.h"
#include "cli/external_cli.h"
#include "fuzz/arg_parse.h"

namespace oplab::cli {

namespace {

struct Args {
  std::vector<std::string> ops, backends;
  std::string cases = "500", out = "out/campaign";
  EngineArgs engine;
  bool fork = false;
};

int usage_error(const std::string& line) {
  std::cerr << line << '\n';
  return kUsage;
}

int run(Args a, const std::vector<std::string>& extras) {
  if (!extras.empty()) return usage_error("campaign: unexpected argument \"" + extras[0] + "\" (see oplab campaign --help)");
  fuzz::CampaignOptions o;
  std::string err;
  o.ops = a.ops.empty() ? std::vector<std::string>{"all"} : a.ops;
  o.backends = a.backends.empty() ? std::vector<std::string>{"all"} : a.backends;
  o.mode = "campaign";
  o.oracle_excluded = true;
  // The two checks every backend is held to on every case: its answer against the oracle, and
  // the same answer twice (a kernel whose answer depends on its previous call agrees with the
  // oracle and still cannot be trusted).
  o.properties = {"differential", "determinism"};
  o.out = a.out;
  o.keep_going = true;
  o.quiet_expected_failures = a.backends.empty();
  if (a.fork) a.engine.isolation = "fork";
  o.live_progress = ::isatty(STDOUT_FILENO);
  uint64_t n = 0;
  if (!fuzz::parse_uint(a.cases, &n, &err, false)) return usage_error("campaign: --cases " + err);
  o.cases = int64_t(n);
  if (a.engine.shrink_time.empty()) a.engine.shrink_time = "0";  // every failing case kept as drawn
  if (const std::string bad = parse_engine_args(a.engine, "campaign", &o); !bad.empty()) return usage_error(bad);
  return run_and_finish(o, "campaign", !a.backends.empty());
}

}  // namespace

static void add_campaign(CLI::App& app) {
  auto a = std::make_shared<Args>();
  auto* sub = app.add_subcommand("campaign", "the default campaign: every op on every backend against ref (the fuzz "
                                             "engine's differential property on a fixed sample), table + JSON");
  sub->allow_extras();  // our own one-line error instead of CLI11's
  sub->add_option("--cases,-n", a->cases, "cases per op (default 500)")->type_name("INT");
  sub->add_option("--out,-o", a->out, "output folder (default out/campaign)");
  sub->add_option("--op", a->ops, "only these ops (repeatable; default all)");
  sub->add_option("--backend,-b", a->backends, "only these backends (repeatable; default all that can run here)");
  sub->add_flag("--fork", a->fork, "same as --isolation fork");
  add_engine_options(sub, a->engine);  // --seed --shard --timeout --shrink-time (default 0) --progress-every
  auto ext = std::make_shared<ExternalArgs>();
  add_external_options(sub, *ext);
  sub->callback([a, ext, sub] {
    if (const std::string bad = install_external_backends(*ext, "campaign", a->out); !bad.empty()) {
      std::cerr << bad << '\n';
      set_exit_code(kUsage);
      return;
    }
    set_exit_code(run(*a, sub->remaining()));
  });
}

static const CommandRegistrar registrar(30, add_campaign);

}  // namespace oplab::cli
