// oplab repro (core/repro.h, repro/repro_request.h, cli/cmd_repro.cpp): every named divergence
// carries a smallest case that is valid; the request is refused where the judge does not find
// the claim; its threshold lies between the library's distances from the spec and from the
// claim; and the verb keeps the exit contract. That every divergence's script runs and shows
// what it claims is tests/repro/every_divergence_repro.sh (ctest repro_every_divergence).
#include <gtest/gtest.h>

#include <sys/wait.h>
#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <set>

#include "cli/builtin_backends.h"
#include "core/case_io.h"
#include "peer/pillow_backend.h"
#include "peer/torchvision_backend.h"
#include "reference/ref_backend.h"
#include "repro/repro_request.h"
#include "tests/cli_fixture.h"
#include "tests/peer_divergence_helpers.h"

namespace oplab {
namespace {

TEST(Repro, EveryDivergenceHasAValidSmallestCase) {
  std::set<std::string> seen;
  for (Backend* b : builtin_backends().all())
    for (const Divergence& d : b->divergences()) {
      if (!seen.insert(d.name).second) continue;
      ASSERT_FALSE(d.example.empty()) << d.name << " of " << b->name() << " has no example case";
      const Case c = case_from_json(json::parse(d.example));
      EXPECT_NO_THROW(validate_case(c)) << d.name;
      // Its equivalent applies to it (or it is a case the peer raises on).
      const bool applies = (d.peer_equivalent && d.peer_equivalent(c)) || (d.peer_raises && d.peer_raises(c));
      EXPECT_TRUE(applies || b->dtype(c.op) != DType::Float64) << d.name << ": its example is not a case it applies to";
    }
  EXPECT_GE(seen.size(), 29u);
}

TEST(Repro, PillowBoxRequestSitsBetweenSpecAndClaim) {
  auto pil = make_pillow_backend();
  if (auto why = pil->unavailable_reason()) GTEST_SKIP() << *why;
  auto ref = make_ref_backend();
  const Divergence& d = testing::divergence(*pil, "pillow-box-not-area");
  const ReproRequest r = divergence_repro(*ref, *pil, d, "oplab repro pillow-box-not-area");
  ASSERT_EQ(r.spec.count("output"), 1u);
  ASSERT_EQ(r.claimed.count("output"), 1u) << "the equivalent's values are the claim";
  const Tensor got = evaluate(*pil, r.c).outputs.at("output");
  EXPECT_GT(testing::max_diff(got, r.spec.at("output")), r.threshold);
  EXPECT_LE(testing::max_diff(got, r.claimed.at("output")), r.threshold);
  const std::optional<ReproScript> s = pil->repro_script(r);
  ASSERT_TRUE(s);
  EXPECT_EQ(s->extension, ".py");
  EXPECT_NE(s->text.find("resample=RESAMPLING.BOX"), std::string::npos);
  EXPECT_NE(s->text.find(d.description.substr(0, 30)), std::string::npos) << "the header says what it shows";
}

TEST(Repro, RecordThatPassesNowIsRefused) {
  auto tv = make_torchvision_backend();
  if (auto why = tv->unavailable_reason()) GTEST_SKIP() << *why;
  auto ref = make_ref_backend();
  // bilinear 2x2 -> 1x1: torch and the spec agree (2.5): nothing to reproduce.
  const Case c = testing::interp({1, 1, 2, 2}, {1, 2, 3, 4}, {{"mode", "bilinear"}, {"size", {1, 1}}});
  EXPECT_THROW(failure_repro(*ref, *tv, c, "x", "", "oplab repro x.json"), ReproNotShown);
}

// Pillow with its named divergences forgotten: its BOX on a 5 -> 3 area case is then a finding,
// as an undocumented difference of a peer would be.
class PillowWithoutDivergences : public Backend {
 public:
  std::string name() const override { return "pillow"; }
  std::string description() const override { return inner_->description(); }
  std::optional<std::string> unavailable_reason() const override { return inner_->unavailable_reason(); }
  std::optional<std::string> unsupported_reason(const Case& c) const override { return inner_->unsupported_reason(c); }
  DType dtype(const std::string& op) const override { return inner_->dtype(op); }
  bool computes_grads(const std::string& op) const override { return inner_->computes_grads(op); }
  Result run(const Case& c, const ValidParams& vp) override { return inner_->run(c, vp); }
  bool writes_repro() const override { return true; }
  std::optional<ReproScript> repro_script(const ReproRequest& r) const override { return inner_->repro_script(r); }

 private:
  std::unique_ptr<Backend> inner_ = make_pillow_backend();
};

int run_script(const ReproScript& s, const std::string& path) {
  write_text_file_atomic(path, s.text);
  const int status = std::system((std::string(OPLAB_PYTHON_FOR_TESTS) + " " + path + " >/dev/null 2>&1").c_str());
  return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
}

TEST(Repro, FailureRecordScriptShowsTheDisagreementAndFailsOnceFixed) {
  PillowWithoutDivergences pil;
  if (auto why = pil.unavailable_reason()) GTEST_SKIP() << *why;
  auto ref = make_ref_backend();
  const Case c = testing::interp({1, 1, 1, 5}, {1, 2, 4, 8, 16}, {{"mode", "area"}, {"size", {1, 3}}});
  const ReproRequest r = failure_repro(*ref, pil, c, "f1", "differs", "oplab repro f1.json");
  EXPECT_TRUE(r.claimed.empty());
  // area: bins {0, 1}, {1, 2, 3}, {3, 4}: 1.5, 14/3, 12; Pillow's BOX 1.5, 4, 12.
  EXPECT_NEAR(r.spec.at("output").data.at(1), 14.0 / 3, 1e-12);
  EXPECT_NEAR(r.threshold, (14.0 / 3 - 4) / 2, 1e-12) << "half of Pillow's 4 against the spec's 14/3";
  const std::string path = (std::filesystem::temp_directory_path() / ("oplab_repro_" + std::to_string(::getpid()) + ".py")).string();
  const std::optional<ReproScript> s = pil.repro_script(r);
  ASSERT_TRUE(s);
  EXPECT_EQ(run_script(*s, path), 0);
  // The same script once Pillow "computes the spec": the claim no longer holds, exit 1.
  ReproRequest fixed = r;
  fixed.spec.at("output").data = {1.5, 4, 12};
  EXPECT_EQ(run_script(*pil.repro_script(fixed), path), 1);
  std::filesystem::remove(path);
}

struct ReproCli : testing_cli::CliFixture {};

TEST_F(ReproCli, UnknownNameIsOneLineWithASuggestion) {
  const auto r = run("repro pillow-box-not-aera");
  EXPECT_EQ(r.code, 2);
  EXPECT_NE(r.err.find("did you mean \"pillow-box-not-area\""), std::string::npos) << r.err;
  EXPECT_EQ(r.err.find('\n'), r.err.size() - 1) << r.err;
  EXPECT_TRUE(r.out.empty());
}

TEST_F(ReproCli, ListNamesEveryDivergenceWithItsBackendAndOp) {
  const auto r = run("repro --list");
  EXPECT_EQ(r.code, 0) << r.err;
  EXPECT_NE(r.out.find("ort-resize-uint8-truncates  onnxruntime-uint8  interpolate"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("ps_roi_pool-backward-roundf  torchvision  ps_roi_pool"), std::string::npos) << r.out;
}

TEST_F(ReproCli, OurKernelsRecordIsNoLibraryScript) {
  // A failure record of a seeded bug (oplab's own code): replay it, there is no library to call.
  const std::string rec = write("rec.json", R"({"kind": "oplab-fuzz-failure", "id": "r1", "backend": "bug-roialign-count0-nan",
    "op": "roi_align", "property": "differential", "detail": "x",
    "case": {"op": "roi_align", "params": {"output_size": [1, 1], "spatial_scale": 1.0, "sampling_ratio": 1, "aligned": false},
             "inputs": {"input": {"shape": [1, 1, 2, 2], "data": [1, 2, 3, 4]},
                        "rois": {"shape": [1, 5], "data": [0, -1.5, 0, 0.5, 1]}}}})");
  const auto r = run("repro " + rec);
  EXPECT_EQ(r.code, 3) << r.err;
  EXPECT_NE(r.err.find("oplab replay"), std::string::npos) << r.err;
  EXPECT_TRUE(r.out.empty());
}

TEST_F(ReproCli, NotARecordIsExitFiveAndWritesNothing) {
  const std::string notrec = write("case.json", R"({"op": "interpolate"})");
  const auto r = run("repro " + notrec + " --out " + path("x.py"));
  EXPECT_EQ(r.code, 5) << r.err;
  EXPECT_FALSE(testing_cli::fs::exists(path("x.py")));
  EXPECT_EQ(run("repro --all " + path("nosuchdir")).code, 2);
  EXPECT_EQ(run("repro").code, 2);
}

}  // namespace
}  // namespace oplab
