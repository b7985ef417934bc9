// The benchmark's timing method (bench/bench.h, bench/peer_timing.h): ours and every peer
// alternate run by run, figures carry their spread, and a ratio whose sides' ranges overlap is
// told apart, for every peer alike. Nothing here is timed:
// the sides report made-up times and record the order they ran in.
#include <gtest/gtest.h>

#include <cctype>
#include <memory>
#include <stdexcept>
#include <string>
#include <vector>

#include "bench/bench.h"
#include "bench/peer_timing.h"
#include "core/case.h"

namespace oplab {
namespace {

TEST(BenchTiming, SidesAlternateRunByRunAfterTheWarmup) {
  std::string order;
  std::vector<double> a_ms = {9, 9, 4, 6, 5}, b_ms = {9, 1, 3, 2};  // first entries: the warm-up round
  size_t ai = 0, bi = 0;
  const auto t = bench::time_alternating({[&] { order += 'A'; return a_ms[ai++]; },
                                          [&] { order += 'B'; return b_ms[bi++]; }},
                                         1, 3);
  EXPECT_EQ(order, "ABABABAB");
  ASSERT_EQ(t.size(), 2u);
  EXPECT_EQ(t[0].runs_ms, (std::vector<double>{9, 4, 6}));  // the warm-up's 9 is not among them
  EXPECT_EQ(t[0].median_ms, 6);
  EXPECT_EQ(t[0].min_ms, 4);
  EXPECT_EQ(t[0].max_ms, 9);
  EXPECT_DOUBLE_EQ(t[0].spread(), 5.0 / 6.0);
  EXPECT_EQ(t[1].median_ms, 2);
}

TEST(BenchTiming, OverlappingRangesAreTold) {
  EXPECT_TRUE(bench::ranges_overlap(bench::timing_of({1, 2, 3}), bench::timing_of({3, 4})));
  EXPECT_FALSE(bench::ranges_overlap(bench::timing_of({1, 2, 2.9}), bench::timing_of({3, 4})));
  EXPECT_FALSE(bench::ranges_overlap(bench::timing_of({}), bench::timing_of({3, 4})));
}

// A fake peer: its start (the probe) appends its letter in lower case to `order`, each pre-run
// '+' and each timed run its letter, which hands out the next of its made-up times.
bench::PeerSide fake_peer(const std::string& name, char letter, std::string& order, std::vector<double> ms,
                          double probe_ms = 1) {
  auto next = std::make_shared<size_t>(0);
  auto times = std::make_shared<std::vector<double>>(std::move(ms));
  return {name, [&order, letter, next, times, probe_ms] {
            order += char(std::tolower(letter));
            return bench::StartedPeer{[&order, letter, next, times](int pre_runs) {
                                        order += std::string(size_t(pre_runs), '+') + letter;
                                        return times->at((*next)++);
                                      },
                                      probe_ms};
          }};
}

TEST(BenchTiming, OursAndEveryPeerAlternateWithOneSetOfFigures) {
  std::string order;
  std::vector<double> ours_ms = {0, 10, 11, 12};  // first: the warm-up round
  size_t oi = 0;
  const std::vector<bench::PeerSide> peers{
      fake_peer("torchvision", 'T', order, {0, 20, 21, 22}),
      {"absent", [&order]() -> bench::StartedPeer {
         order += 'a';
         throw std::runtime_error("absent: no such op");
       }},
      fake_peer("fast", 'F', order, {0, 5, 12, 6})};
  const bench::Measurement m = bench::measure([&] { order += 'O'; return ours_ms[oi++]; }, peers, {1, 3, 1000, 3, 0});
  // Every peer is started (probed) once, then ours and each live peer alternate run by run.
  EXPECT_EQ(order, "taf" "OTF" "OTF" "OTF" "OTF");
  ASSERT_TRUE(m.ours);
  EXPECT_EQ(m.ours->runs_ms, (std::vector<double>{10, 11, 12}));
  ASSERT_EQ(m.peers.size(), 3u);
  EXPECT_EQ(m.peers[0].name, "torchvision");
  ASSERT_TRUE(m.peers[0].t);
  EXPECT_EQ(m.peers[0].t->median_ms, 21);
  EXPECT_FALSE(m.peers[0].overlap);  // [20, 22] against ours [10, 12]
  EXPECT_FALSE(m.peers[1].t);
  EXPECT_EQ(m.peers[1].unsupported, "absent: no such op");
  ASSERT_TRUE(m.peers[2].t);
  EXPECT_EQ(m.peers[2].t->median_ms, 6);
  EXPECT_EQ(m.peers[2].t->spread(), (12.0 - 5.0) / 6.0);
  EXPECT_TRUE(m.peers[2].overlap);  // [5, 12] against [10, 12]: the same flag as torchvision's
  EXPECT_EQ(m.warmup, 1);
  EXPECT_EQ(m.repeats, 3);
  EXPECT_FALSE(m.slow);
}

// Every side's timed run follows an untimed run of its own, back to back: ours called twice, a
// peer asked for its pre-run in the same request. Only the timed runs' figures count.
TEST(BenchTiming, EachTimedRunFollowsAnUntimedRunOfTheSameSide) {
  std::string order;
  std::vector<double> ours_ms = {0, 0, 30, 10, 31, 11};  // a pre-run before every timed run
  size_t oi = 0;
  const std::vector<bench::PeerSide> peers{fake_peer("p", 'P', order, {5, 20, 21})};
  const bench::Measurement m = bench::measure([&] { order += 'O'; return ours_ms[oi++]; }, peers, {1, 2, 1000, 3, 1});
  EXPECT_EQ(order, "p" "OO+P" "OO+P" "OO+P");  // the warm-up round, then two timed rounds
  EXPECT_EQ(m.pre_runs, 1);
  EXPECT_EQ(m.peer_pre_runs, 1);
  EXPECT_EQ(m.ours->runs_ms, (std::vector<double>{10, 11}));  // 30 and 31 were the pre-runs
  EXPECT_EQ(m.peers[0].t->runs_ms, (std::vector<double>{20, 21}));
}

// Ours keeps its pre-run: it costs milliseconds against the slow peer's seconds, and ours timed
// right after a second of the peer's work reads slow (docs/bench/2026-11-29h-cpu.md).
TEST(BenchTiming, ASlowPeerCutsTheRunsTheWarmupAndThePeersPreRuns) {
  std::string order;
  const std::vector<bench::PeerSide> peers{fake_peer("slow", 'S', order, {3000, 3100}, 2500),
                                           fake_peer("quick", 'Q', order, {1, 2})};
  const bench::Measurement m = bench::measure([&] { order += 'O'; return 1.0; }, peers, {2, 5, 1000, 2, 1});
  EXPECT_EQ(order, "sq" "OOSQ" "OOSQ");  // no warm-up round, no peer pre-runs, 2 runs
  EXPECT_TRUE(m.slow);
  EXPECT_TRUE(m.peers[0].slow);
  EXPECT_FALSE(m.peers[1].slow);
  EXPECT_EQ(m.repeats, 2);
  EXPECT_EQ(m.warmup, 0);
  EXPECT_EQ(m.pre_runs, 1);
  EXPECT_EQ(m.peer_pre_runs, 0);
  EXPECT_EQ(m.peers[0].t->runs_ms, (std::vector<double>{3000, 3100}));
}

TEST(BenchTiming, APeerThatStopsAnsweringIsDroppedAndTheRestRetimed) {
  std::string order;
  int calls = 0;
  const std::vector<bench::PeerSide> peers{
      {"flaky", [&] {
         return bench::StartedPeer{[&](int) -> double {
                                     order += 'X';
                                     if (++calls == 2) throw std::runtime_error("bridge died");
                                     return 1;
                                   },
                                   1};
       }},
      fake_peer("steady", 'P', order, {4, 5, 6, 7})};
  int ours = 0;
  const bench::Measurement m = bench::measure([&] { order += 'O'; return double(++ours); }, peers, {0, 2, 1000, 3, 0});
  // The first attempt ends at flaky's second run; the second times ours and steady alone.
  EXPECT_EQ(order, "p" "OXP" "OX" "OP" "OP");
  EXPECT_FALSE(m.peers[0].t);
  EXPECT_EQ(m.peers[0].unsupported, "stopped answering: bridge died");
  ASSERT_TRUE(m.peers[1].t);
  EXPECT_EQ(m.peers[1].t->runs_ms, (std::vector<double>{5, 6}));  // 4 went to the failed attempt
  EXPECT_EQ(m.ours->runs_ms, (std::vector<double>{3, 4}));
}

// A peer without the op (Unsupported) or not installed (BackendUnavailable) has no figure to
// give; one whose start or run throws anything else failed, and is marked so (the record and
// the report then say "failed", not that the peer lacks the op).
TEST(BenchTiming, APeerThatFailsIsToldApartFromOneWithoutTheCase) {
  std::string order;
  auto throwing = [](std::string name, std::function<void()> raise) {
    return bench::PeerSide{std::move(name), [raise]() -> bench::StartedPeer {
                             raise();
                             return {};
                           }};
  };
  int calls = 0;
  const std::vector<bench::PeerSide> peers{
      throwing("lacks", [] { throw Unsupported("lacks: no op roi_align"); }),
      throwing("absent", [] { throw BackendUnavailable("absent: not installed"); }),
      throwing("crashed", [] { throw std::runtime_error("the process stopped reading its input"); }),
      {"dies", [&] {
         return bench::StartedPeer{[&](int) -> double {
                                     if (++calls == 2) throw std::runtime_error("bridge died");
                                     return 1;
                                   },
                                   1};
       }}};
  const bench::Measurement m = bench::measure([] { return 1.0; }, peers, {0, 2, 1000, 3, 0});
  ASSERT_EQ(m.peers.size(), 4u);
  EXPECT_FALSE(m.peers[0].failed);
  EXPECT_EQ(m.peers[0].unsupported, "lacks: no op roi_align");
  EXPECT_FALSE(m.peers[1].failed);
  EXPECT_TRUE(m.peers[2].failed);
  EXPECT_EQ(m.peers[2].unsupported, "the process stopped reading its input");
  EXPECT_TRUE(m.peers[3].failed);
  EXPECT_EQ(m.peers[3].unsupported, "stopped answering: bridge died");
  for (const bench::PeerTiming& p : m.peers) EXPECT_FALSE(p.t) << p.name;
}

TEST(BenchTiming, WithoutOursThePeersStillAlternateAndWhatOursThrowsIsThrown) {
  std::string order;
  const bench::Measurement m =
      bench::measure(nullptr, {fake_peer("a", 'A', order, {1, 2}), fake_peer("b", 'B', order, {3, 4})}, {0, 2, 1000, 3, 0});
  EXPECT_EQ(order, "ab" "AB" "AB");
  EXPECT_FALSE(m.ours);
  EXPECT_FALSE(m.peers[0].overlap);
  EXPECT_THROW(bench::measure([]() -> double { throw std::logic_error("ours broke"); }, {}, {0, 1, 1000, 3, 0}),
               std::logic_error);
}

TEST(BenchTiming, TheFmaPeakIsMeasuredWhereTheCpuHasFma) {
  const bench::FmaPeak p = bench::fma_peak_gflops(1);
  if (p.isa.empty()) GTEST_SKIP() << "no vector FMA on this CPU";
  EXPECT_EQ(p.runs_gflops.size(), 3u);
  EXPECT_GT(p.gflops, 1.0);  // any FMA unit does more than a GFLOP/s
  for (double r : p.runs_gflops) EXPECT_LE(r, p.gflops);
}

}  // namespace
}  // namespace oplab
