// The live differential suite: `ref` against the real peer (Debian's torch 1.13 /
// torchvision 0.14, float64) on fixed-seed random cases aimed at the ops' edges.
// Double against double must agree to 1e-10 (relative, with the tensor's largest magnitude
// as the floor for elements that cancel to near zero); every disagreement must be a named
// divergence of SPEC §8 that the reference reproduces on its equivalent case.
#include <gtest/gtest.h>

#include <cmath>
#include <iostream>
#include <map>

#include "cli/builtin_backends.h"
#include "compare/differential.h"
#include "fuzz/features.h"
#include "fuzz/generators.h"
#include "peer/divergences.h"

namespace oplab {
namespace {

constexpr uint64_t kSeed = 20261122;

struct Tally {
  std::map<std::string, int> verdicts, divergences;
  std::map<std::string, int> features;  // edge situations among the cases compared with the peer
  double worst = 0;
  int compared() const {
    auto get = [&](const char* k) { auto it = verdicts.find(k); return it == verdicts.end() ? 0 : it->second; };
    return get("agree") + get("named-divergence");
  }
};

void report(const std::string& what, const Tally& t) {
  std::cout << "[differential] " << what << ":";
  for (const auto& [k, n] : t.verdicts) std::cout << " " << k << "=" << n;
  std::cout << " max_rel=" << t.worst << "\n";
  for (const auto& [name, n] : t.divergences) std::cout << "[differential]   divergence " << name << ": " << n << "\n";
  std::cout << "[differential]   edges covered:";
  for (const auto& [name, n] : t.features) std::cout << " {" << name << "}=" << n;
  std::cout << "\n";
}

// Every named edge must occur among the cases actually compared with the peer.
void expect_covered(const Tally& t, const std::vector<std::string>& edges) {
  for (const auto& e : edges) EXPECT_TRUE(t.features.count(e)) << "no compared case exercises: " << e;
}

Tally run_suite(const std::string& op, int n_cases) {
  Backend* ref = builtin_backends().find("ref");
  Backend* peer = builtin_backends().find("torchvision");
  if (auto why = peer->unavailable_reason()) ADD_FAILURE() << "the peer must run here: " << *why;
  Tally t;
  const compare::Tolerance tol;
  for (const Case& c : fuzz::sample_cases(op, n_cases, kSeed)) {
    const compare::Outcome o = compare::compare_on_case(*ref, *peer, c, tol, torchvision_divergences());
    ++t.verdicts[compare::verdict_name(o.verdict)];
    if (o.verdict == compare::Verdict::NamedDivergence) ++t.divergences[o.divergence];
    if (o.verdict == compare::Verdict::Agree || o.verdict == compare::Verdict::NamedDivergence)
      for (const auto& f : fuzz::case_features(c)) ++t.features[f];
    if (o.verdict == compare::Verdict::Agree) t.worst = std::max(t.worst, o.max_rel);
    EXPECT_TRUE(o.verdict == compare::Verdict::Agree || o.verdict == compare::Verdict::NamedDivergence ||
                o.verdict == compare::Verdict::Unsupported)
        << op << ": " << compare::verdict_name(o.verdict) << ": " << o.detail;
  }
  return t;
}

TEST(DifferentialPeer, DeformConv2d) {
  const Tally t = run_suite("deform_conv2d", 500);
  report("deform_conv2d", t);
  EXPECT_GE(t.compared(), 500);
  expect_covered(t, {"sample y=-1", "sample y=0", "sample y=len-1", "sample y=len", "sample x=-1", "sample x=len",
                     "sample y a hair from a border", "sample y far outside", "sample x on an interior lattice point",
                     "N=0", "weight groups", "offset groups", "mask", "bias", "stride>1", "dilation>1", "1x1 output",
                     "padding 0"});
  EXPECT_LE(t.worst, 1e-10);
}

TEST(DifferentialPeer, RoiPool) {
  // 600: the peer declines the cases with a NaN or -Inf pixel (about 1 in 12, gen_case).
  const Tally t = run_suite("roi_pool", 600);
  report("roi_pool", t);
  EXPECT_GE(t.compared(), 500);
  expect_covered(t, {"K=0", "N=0", "round tie (x*s = n + 0.5)", "reversed box", "box outside the image (empty bins)",
                     "more bins than pixels (overlapping bins)"});
}

TEST(DifferentialPeer, RoiAlign) {
  // A quarter of the generated cases use pool_mode max, and a few have H = 0 or W = 0, which
  // the peer lacks or declines (max is covered by hand-derived cases); 800 cases leave over
  // 500 compared.
  const Tally t = run_suite("roi_align", 800);
  report("roi_align", t);
  EXPECT_GE(t.compared(), 500);
  expect_covered(t, {"K=0", "N=0", "reversed box", "zero-size box", "box outside the image", "bins with no samples",
                     "sample y=-1", "sample y=0", "sample y=len-1", "sample y=len", "sample x=-1", "sample x=len",
                     "sample y a hair from a border", "sample y outside", "aligned", "not aligned", "fixed grid",
                     "adaptive grid", "adaptive grid on an exact integer", "1x1 output"});
}

TEST(DifferentialPeer, Interpolate) {
  const Tally t = run_suite("interpolate", 600);
  report("interpolate", t);
  EXPECT_GE(t.compared(), 500);
  expect_covered(t, {"nearest 1-D", "nearest 2-D", "nearest 3-D", "nearest-exact 1-D", "nearest-exact 2-D",
                     "nearest-exact 3-D", "area 1-D", "area 2-D", "area 3-D", "linear 1-D", "bilinear 2-D",
                     "bicubic 2-D", "trilinear 3-D", "align_corners=true", "align_corners=false", "recompute=true",
                     "recompute=false", "recompute=null", "output size 1", "same size", "downsampling",
                     "non-integer scale factor", "scale factor < 1", "in*sf within 1e-12 of an integer", "N=0"});
}

// The peer has no DeformRoIPool, but with zero (or no) offset it is exactly aligned RoIAlign
// (SPEC §5: always aligned, no minimum clamp, same grid): compare ref deform_roi_pool with the
// peer's roi_align on the equivalent case.
TEST(DifferentialPeer, DeformRoiPoolWithoutOffsetIsAlignedRoiAlign) {
  Backend* ref = builtin_backends().find("ref");
  Backend* peer = builtin_backends().find("torchvision");
  int compared = 0, declined = 0;
  for (Case c : fuzz::sample_cases("deform_roi_pool", 500, kSeed)) {
    c.inputs.erase("offset");
    c.params.erase("gamma");
    Case ra = c;
    ra.op = "roi_align";
    ra.params["aligned"] = true;
    if (auto why = peer->unsupported_reason(ra)) {  // e.g. the peer's crash on H = 0 or W = 0
      ++declined;
      continue;
    }
    const Result mine = evaluate(*ref, c);
    Result theirs;
    try {
      theirs = evaluate(*peer, ra);
    } catch (const std::runtime_error& e) {
      // Only a named divergence may explain a peer error (its negative-grid buffer).
      bool named = false;
      for (const auto& d : torchvision_divergences()) named |= d.peer_raises && d.peer_raises(ra);
      EXPECT_TRUE(named) << e.what();
      ++declined;
      continue;
    }
    ASSERT_EQ(mine.outputs.at("output").shape, theirs.outputs.at("output").shape);
    const Tensor &a = mine.outputs.at("output"), &b = theirs.outputs.at("output");
    // NaN against NaN and Inf against the same Inf agree (the cases' NaN and Inf pixels, gen_case).
    auto same = [](double x, double y) {
      return (std::isnan(x) && std::isnan(y)) || x == y || std::fabs(x - y) <= 1e-10 * (1 + std::fabs(y));
    };
    for (size_t i = 0; i < a.data.size(); ++i) ASSERT_TRUE(same(a.data[i], b.data[i])) << a.data[i] << " vs " << b.data[i];
    const Tensor &ga = mine.grads.at("input"), &gb = theirs.grads.at("input");
    for (size_t i = 0; i < ga.data.size(); ++i) ASSERT_TRUE(same(ga.data[i], gb.data[i])) << ga.data[i] << " vs " << gb.data[i];
    ++compared;
  }
  std::cout << "[differential] deform_roi_pool (offset-free) vs peer roi_align aligned: " << compared << " cases agree, " << declined << " declined by the peer\n";
  EXPECT_EQ(compared + declined, 500);
  EXPECT_GE(compared, 400);
}

}  // namespace
}  // namespace oplab
