#pragma once
// The corpus check that every Halide op suite runs on each Halide backend: the op's fixed-seed
// edge-aimed cases (fuzz::sample_cases) against the double reference by the per-element error
// bound of SPEC §9 (compare/float_compare.h), forward and backward. Each case must agree or
// flip at a boundary; where the kernels make every discrete decision in double from the
// float32 inputs, as the reference does, a flip must also vanish once the inputs are rounded to
// float32 (otherwise it is a wrong decision, not a rounding). Prints one line of counts.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>
#include <functional>
#include <iostream>
#include <map>
#include <string>

#include "cli/builtin_backends.h"
#include "compare/float_compare.h"
#include "fuzz/generators.h"

namespace oplab {

struct CorpusOptions {
  // Flips are checked again on the float32-rounded case (false: kernels that round their own
  // coordinates, where a flip is the expected rounding).
  bool flips_vanish_rounded = true;
  // A case whose float32 bound is vacuous (compare::Verdict::Skipped) is accepted, and said so.
  bool allow_skipped = false;
  // Extra counts per case, printed with the verdicts ("4-D", "5-D", ...).
  std::function<void(const Case&, std::map<std::string, int>&)> tally;
};

struct CorpusCounts {
  std::map<std::string, int> count;  // verdict name (and the tally's keys) -> cases
  double worst = 0;                  // worst error / bound over the corpus
};

// `tag` opens the printed line: "[tag] op on backend (N cases, forward+backward): ...".
inline CorpusCounts check_corpus(Backend& b, const std::string& op, int cases, uint64_t seed, const std::string& tag,
                                 const CorpusOptions& opt = {}) {
  Backend& ref = *builtin_backends().find("ref");
  const std::string who = op + " on " + b.name();
  CorpusCounts r;
  for (const Case& c : fuzz::sample_cases(op, cases, seed)) {
    // The corpus exists to check the backward as well: every case carries a grad_output.
    EXPECT_TRUE(c.grad_output.has_value()) << who << ": a corpus case without grad_output";
    const compare::FloatOutcome o = compare::compare_float_backend(ref, b, c);
    ++r.count[compare::verdict_name(o.verdict)];
    r.worst = std::max(r.worst, o.worst_ratio);
    if (opt.tally) opt.tally(c, r.count);
    EXPECT_TRUE(o.verdict == compare::Verdict::Agree || o.verdict == compare::Verdict::BoundaryFlip ||
                (opt.allow_skipped && o.verdict == compare::Verdict::PrecisionExhausted))
        << who << ": " << compare::verdict_name(o.verdict) << ": " << o.detail;
    if (o.verdict == compare::Verdict::PrecisionExhausted && opt.allow_skipped) std::cout << "[" << tag << "] " << b.name() << ": " << o.detail << "\n";
    if (o.verdict == compare::Verdict::BoundaryFlip && opt.flips_vanish_rounded) {
      const compare::FloatOutcome f = compare::compare_float_backend(ref, b, compare::float_rounded_case(c));
      EXPECT_EQ(f.verdict, compare::Verdict::Agree)
          << who << ", inputs rounded to float32: " << compare::verdict_name(f.verdict) << ": " << f.detail;
    }
  }
  std::cout << "[" << tag << "] " << who << " (" << cases << " cases, forward+backward):";
  for (const auto& [k, n] : r.count) std::cout << " " << k << "=" << n;
  std::cout << " worst error/bound=" << r.worst << "\n";
  return r;
}

// A parameter as a test name: gtest allows only letters, digits and '_' ("halide-cpu" ->
// "halide_cpu").
inline std::string test_name_of(std::string s) {
  for (char& ch : s)
    if (ch == '-' || ch == ' ') ch = '_';
  return s;
}

}  // namespace oplab
