#pragma once
// oplab in a test of your own (docs/plugin.md, "From GoogleTest"): subclass oplab::Backend
// (core/backend.h) around your kernel, run a fuzz campaign of it against oplab's double
// reference, and assert that the campaign is clean:
//
//   MyKernel k;                         // : public oplab::Backend
//   oplab::CampaignOptions o;
//   o.ops = {"roi_align"};
//   o.cases = 200;
//   const oplab::CampaignSummary s = oplab::run_campaign(k, o);
//   EXPECT_TRUE(s.clean()) << s.describe();
//
// Link oplab::lib (find_package(oplab)). The campaign is `oplab fuzz --backend NAME` run on
// a backend that lives in the test's own process.
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "core/backend.h"

namespace oplab {

struct CampaignOptions {
  std::vector<std::string> ops = {"all"};  // op names, or {"all"}: every op (those the backend does
                                           // not support are counted as unsupported, not failed)
  std::vector<std::string> properties;     // empty: every property (`oplab fuzz --property`)
  int64_t cases = 100;                     // cases per op, 0..cases-1 of the seed
  std::optional<double> seconds;           // also stop starting cases after this long
  uint64_t seed = 1;
  std::string out;                         // summary.json and failures/ go here; empty: a fresh
                                           // temporary folder, removed when the campaign is clean
  bool isolate = true;                     // evaluate in a worker process, so that a crash or a
                                           // hang fails its case instead of ending the test
  double shrink_seconds = 10;              // per failure; 0: save the failing case as drawn
  bool keep_going = false;                 // false: stop at the first failure (shrunk and saved)
};

struct CampaignSummary {
  int64_t cases = 0;
  int64_t checks = 0;
  double seconds = 0;
  std::vector<std::string> failures;  // one line each: op, property, what failed, the saved case
  std::string out;                    // where the records are (empty when removed)
  bool clean() const { return failures.empty(); }
  std::string describe() const;       // "200 cases, 0 failures" and one line per failure
};

// Fuzzes `subject` against the reference. Throws std::invalid_argument with one line for an
// option naming an unknown op or property, or a subject named "ref".
CampaignSummary run_campaign(Backend& subject, const CampaignOptions& options);

}  // namespace oplab
