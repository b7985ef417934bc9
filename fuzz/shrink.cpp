#include "fuzz/shrink.h"

#include <chrono>

#include <rapidcheck/Check.h>

#include "fuzz/seeds.h"

namespace oplab::fuzz {

namespace {

// RapidCheck reports progress through a listener; we only count, and print nothing.
class CountingListener : public rc::detail::TestListener {
 public:
  void onTestCaseFinished(const rc::detail::CaseDescription&) override {}
  void onShrinkTried(const rc::detail::CaseDescription&, bool accepted) override {
    ++tried;
    if (accepted) ++accepted_count;
  }
  void onTestFinished(const rc::detail::TestMetadata&, const rc::detail::TestResult&) override {}
  int tried = 0, accepted_count = 0;
};

}  // namespace

ShrinkOutcome shrink_case(const rc::Gen<Case>& gen, uint64_t seed, int size,
                          const std::function<bool(const Case&)>& fails, double budget_s) {
  using clock = std::chrono::steady_clock;
  const auto t0 = clock::now();
  ShrinkOutcome out;
  out.minimal = draw_case(gen, seed, size);
  auto spent = [&] { return std::chrono::duration<double>(clock::now() - t0).count(); };

  // The property: regenerate at the case's own size (resize), judge, remember the last failure.
  const rc::detail::Property property =
      rc::gen::map(rc::gen::resize(size, gen), [&](Case c) {
        rc::detail::CaseDescription d;
        d.example = [] { return rc::detail::Example{}; };
        if (out.reproduced && spent() > budget_s) {
          out.budget_exhausted = true;
          d.result = rc::detail::CaseResult(rc::detail::CaseResult::Type::Success);
          return d;
        }
        const bool failed = fails(c);
        if (failed) {
          out.reproduced = true;
          out.minimal = std::move(c);
        }
        d.result = rc::detail::CaseResult(failed ? rc::detail::CaseResult::Type::Failure
                                                 : rc::detail::CaseResult::Type::Success);
        return d;
      });

  rc::detail::TestParams params;
  params.seed = seed;  // its first draw is Random(seed).split(): the campaign's case
  params.maxSuccess = 1;
  params.maxSize = size;
  params.disableShrinking = false;
  rc::detail::TestMetadata meta;
  meta.id = "oplab-shrink";
  CountingListener listener;
  // An explicit empty reproduce map: RC_PARAMS from the environment must not redirect the run.
  rc::detail::checkProperty(property, meta, params, listener, {});
  out.accepted = listener.accepted_count;
  out.tried = listener.tried;
  out.seconds = spent();
  return out;
}

}  // namespace oplab::fuzz
