#pragma once
// One timing path for ours and every peer of a measurement: each peer is started once (its
// probe: does it take the case, and is it slow), then ours and every live peer alternate run by
// run (O P1 P2 O P1 P2 ...), so that a slow phase of a noisy machine falls on every side alike,
// and every peer's figure carries the same statistics and the same overlap flag against ours.
// Each timed run comes right after an untimed run of the same side (its pre-run: O O P1 P1 ...,
// a peer's inside the same request), so that every side is timed with its own data in cache
// and the cores it uses awake, whatever ran before it (docs/bench/2026-11-29g-cpu.md: on a
// virtual machine an idle core takes milliseconds to come back). A peer cut as slow (below)
// gets none; ours keeps its own.
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "bench/bench.h"

namespace oplab::bench {

// A peer started for one measurement: a function that does `pre_runs` untimed runs and then one
// timed run, back to back, and returns the time of the timed one (ms); and the time of the
// probe run that start made.
struct StartedPeer {
  std::function<double(int pre_runs)> run;
  double probe_ms = 0;
};

// A peer of the measurement. `start` throws with one line where the peer cannot time this case;
// that line is kept as the peer's `unsupported`. Unsupported (the peer lacks the op or mode) and
// BackendUnavailable (it is not installed here) say the peer has no figure to give; anything
// else (a bridge that crashed, an answer that makes no sense) marks the peer `failed`: it
// should have timed the case, and the record says so rather than passing it off as a missing op.
struct PeerSide {
  std::string name;
  std::function<StartedPeer()> start;
};

struct PeerTiming {
  std::string name;
  std::optional<Timing> t;   // empty where the peer did not take the case
  std::string unsupported;   // why, where t is empty
  bool failed = false;       // t is empty because the peer failed, not because it lacks the case
  bool overlap = false;      // t's [min, max] overlaps ours: a ratio within the noise
  bool slow = false;         // its probe ran past the slow threshold
};

struct TimingPlan {
  int warmup = 2, repeats = 5;
  // A peer whose probe runs longer than slow_ms (seconds per run) cuts the measurement to
  // slow_repeats runs with no warm-up and no pre-runs of the peers, so that one shape cannot
  // take the main job's time (a run of a second is not changed by a few milliseconds of
  // waking). Ours keeps its pre-runs, milliseconds against the peer's seconds: timed right after
  // such a peer, ours read 41-47 ms instead of 25-27 (deform_conv2d N8 C64 backward, two
  // threads, docs/bench/2026-11-29h-cpu.md).
  double slow_ms = 1000;
  int slow_repeats = 3;
  // Untimed runs of a side right before each of its timed runs (0: each side timed as the
  // others leave the machine, the method of the records before 2026-11-29g).
  int pre_runs = 1;
};

struct Measurement {
  std::optional<Timing> ours;     // empty where `ours` was empty
  std::vector<PeerTiming> peers;  // in the order given
  int warmup = 0, repeats = 0;    // what was run, after a slow peer's cut
  int pre_runs = 0;               // ours, before each timed run
  int peer_pre_runs = 0;          // each peer's (none after a slow peer's cut)
  bool slow = false;
};

// Times `ours` (may be empty: only the peers then) and every peer in alternation under `plan`.
// A peer that throws during the timed runs is dropped with its line ("stopped answering: ...")
// and the rest are timed again; what `ours` throws is thrown on.
Measurement measure(const std::function<double()>& ours, const std::vector<PeerSide>& peers, const TimingPlan& plan);

}  // namespace oplab::bench
