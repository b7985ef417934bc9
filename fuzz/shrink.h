#pragma once
// Shrinking a failing case with RapidCheck (no shrinker of our own). The case is regenerated
// from its (seed, size) inside a RapidCheck property run whose first draw is exactly that
// case (fuzz/seeds.h), so RapidCheck's search fails at once and its shrinker walks the case's
// shrink tree: every value the generator picked shrinks towards its simplest choice (small
// dims, zero offsets, plain values), and a shrink is kept while the property still fails.
// The last failing case RapidCheck evaluates is its minimal counterexample.
#include <functional>

#include <rapidcheck.h>

#include "core/case.h"

namespace oplab::fuzz {

struct ShrinkOutcome {
  bool reproduced = false;  // the regenerated case failed again (false: flaky, nothing shrunk)
  Case minimal;             // the smallest failing case found (the original when not reproduced)
  int accepted = 0;         // shrinks kept
  int tried = 0;            // cases evaluated while shrinking
  double seconds = 0;
  bool budget_exhausted = false;  // stopped early: later shrinks were not evaluated
};

// `fails` judges one case (true: it still fails). `budget_s` bounds the time spent: once
// spent, remaining candidates count as passing, which ends the walk with the best so far.
ShrinkOutcome shrink_case(const rc::Gen<Case>& gen, uint64_t seed, int size,
                          const std::function<bool(const Case&)>& fails, double budget_s);

}  // namespace oplab::fuzz
