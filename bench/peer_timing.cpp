#include "bench/peer_timing.h"

#include <algorithm>
#include <stdexcept>

#include "core/case.h"

namespace oplab::bench {

namespace {

// Thrown out of a peer's run so that measure() knows which side failed.
struct PeerFailed : std::runtime_error {
  PeerFailed(size_t i, const std::string& what) : std::runtime_error(what), index(i) {}
  size_t index;
};

}  // namespace

Measurement measure(const std::function<double()>& ours, const std::vector<PeerSide>& peers, const TimingPlan& plan) {
  Measurement m;
  std::vector<std::function<double(int)>> runs(peers.size());
  for (size_t i = 0; i < peers.size(); ++i) {
    PeerTiming p;
    p.name = peers[i].name;
    try {
      StartedPeer s = peers[i].start();
      runs[i] = std::move(s.run);
      p.slow = s.probe_ms > plan.slow_ms;
      m.slow |= p.slow;
    } catch (const Unsupported& e) {
      p.unsupported = e.what();
    } catch (const BackendUnavailable& e) {
      p.unsupported = e.what();
    } catch (const std::exception& e) {
      p.unsupported = e.what();
      p.failed = true;
    }
    m.peers.push_back(p);
  }
  m.warmup = m.slow ? 0 : plan.warmup;
  m.repeats = m.slow ? std::min(plan.repeats, plan.slow_repeats) : plan.repeats;
  m.pre_runs = plan.pre_runs;
  m.peer_pre_runs = m.slow ? 0 : plan.pre_runs;
  const int our_pre_runs = m.pre_runs, peer_pre_runs = m.peer_pre_runs;
  for (;;) {
    std::vector<std::function<double()>> sides;
    std::vector<size_t> live;  // m.peers index of each peer side
    if (ours)
      sides.push_back([&ours, our_pre_runs] {
        for (int i = 0; i < our_pre_runs; ++i) (void)ours();
        return ours();
      });
    for (size_t i = 0; i < peers.size(); ++i) {
      if (!runs[i]) continue;
      live.push_back(i);
      sides.push_back([&runs, i, peer_pre_runs] {
        try {
          return runs[i](peer_pre_runs);
        } catch (const std::exception& e) {
          throw PeerFailed(i, e.what());
        }
      });
    }
    if (sides.empty()) return m;
    try {
      const std::vector<Timing> t = time_alternating(sides, m.warmup, m.repeats);
      if (ours) m.ours = t.front();
      for (size_t k = 0; k < live.size(); ++k) {
        PeerTiming& p = m.peers[live[k]];
        p.t = t[k + (ours ? 1 : 0)];
        p.overlap = m.ours && ranges_overlap(*m.ours, *p.t);
      }
      return m;
    } catch (const PeerFailed& e) {
      m.peers[e.index].unsupported = std::string("stopped answering: ") + e.what();
      m.peers[e.index].failed = true;
      runs[e.index] = nullptr;
    }
  }
}

}  // namespace oplab::bench
