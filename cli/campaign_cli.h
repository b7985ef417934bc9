#pragma once
// What `oplab fuzz` and `oplab campaign` share, since they are one engine (fuzz/campaign.h):
// the options that drive it, parsed by us so that a bad value is one line naming the verb and
// the option, and how a campaign ends (the table of records, the state it ended in, failures
// and findings by role, the exit status).
#include <string>

#include <CLI/CLI.hpp>

#include "fuzz/campaign.h"

namespace oplab::cli {

// The engine's options as the user typed them.
struct EngineArgs {
  std::string seed = "1", shard = "0/1", timeout = "10", shrink_time, progress_every = "10", isolation = "worker";
};

// Adds --seed, --shard, --isolation, --timeout, --shrink-time and --progress-every to `sub`.
void add_engine_options(CLI::App* sub, EngineArgs& a);

// Parses them into `o`; returns "" or the one-line error ("VERB: --seed ...").
std::string parse_engine_args(const EngineArgs& a, const std::string& verb, fuzz::CampaignOptions* o);

// Runs the campaign and ends it: prints the records' table and the closing lines, and returns
// the exit status: 2 bad options (one line on stderr), 130 interrupted (all found so far is
// saved), 1 failures or findings that count (cli/builtin_backends.h: under "all", only those of
// implementations) or an error writing the output, 0 otherwise. `named`: the user named the
// backends.
int run_and_finish(const fuzz::CampaignOptions& o, const std::string& verb, bool named);

}  // namespace oplab::cli
