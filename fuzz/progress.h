#pragma once
// The campaign's progress report. On a terminal: one status line rewritten in place a few
// times a second (cases/s with shrinking excluded, the share of time spent shrinking, cases
// per op, failures). Otherwise (a log file, CI): one plain line
// every `every_s` seconds. Messages (a failure found) go on lines of their own either way.
#include <chrono>
#include <map>
#include <ostream>
#include <string>

namespace oplab::fuzz {

struct ProgressSnapshot {
  double elapsed_s = 0;
  int64_t cases = 0;
  std::map<std::string, int64_t> per_op;
  int64_t checks = 0;
  int64_t failures = 0;
  std::string phase;  // e.g. "shrinking roi_align-..." while a failure is being shrunk
  double shrink_s = 0;  // of elapsed_s, the time spent shrinking failures
};

// Cases per second of the time spent fuzzing, shrinking excluded (a campaign that meets many
// failures would otherwise read slow because it shrinks them), and the share of the elapsed
// time spent shrinking, in [0, 1].
double fuzz_rate(int64_t cases, double elapsed_s, double shrink_s);
double shrink_share(double elapsed_s, double shrink_s);

class Progress {
 public:
  Progress(std::ostream& os, bool live, double every_s);
  void update(const ProgressSnapshot& s, bool force = false);
  void message(const std::string& text);  // whole lines
  void finish(const ProgressSnapshot& s);

 private:
  std::string line(const ProgressSnapshot& s) const;
  void clear_live();
  std::ostream& os_;
  bool live_;
  double every_s_;
  std::chrono::steady_clock::time_point last_{};
  bool shown_ = false;
  size_t last_len_ = 0;
  std::string last_plain_;  // the last plain line printed: finish() does not repeat it
};

}  // namespace oplab::fuzz
