#pragma once
// How a campaign folder reads to someone who did not run it (`oplab report`, `oplab merge`):
// the state it really ended in, and every failure it saved.
//
// A campaign killed without warning (SIGKILL, a lost node) cannot write "killed" itself: its
// summary.json stays "running". While it runs it holds DIR/.lock (flock) and writes a
// heartbeat (time, pid, host) into every summary, at least every 2 s; a reader on the same
// host that can take the lock, or any reader that finds the heartbeat older than
// kStaleAfterS, knows it is no longer running and says so, with its last event.
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

namespace oplab::fuzz {

constexpr double kStaleAfterS = 120;

struct CampaignState {
  // finished, interrupted, partial (a merge), running, killed (the lock is free: no one runs
  // it), stale (another host's heartbeat stopped more than kStaleAfterS ago)
  std::string status;
  std::string detail;  // for killed/stale: "killed: no heartbeat since T (pid P on H); last event: E"
};

// The state of the campaign in `dir`, whose summary.json holds `summary`.
CampaignState read_state(const std::string& dir, const nlohmann::json& summary);

// Every failure record saved under DIR/failures (ID.json, not ID.case.json), by file name: a
// campaign killed mid-way has records its summary lacks.
std::vector<nlohmann::json> failure_records(const std::string& dir);

// The heartbeat a running campaign writes into its summary: {"time", "unix_s", "pid", "host"}.
nlohmann::json heartbeat();

}  // namespace oplab::fuzz
