#include "fuzz/progress.h"

#include <algorithm>
#include <iomanip>
#include <sstream>

namespace oplab::fuzz {

double fuzz_rate(int64_t cases, double elapsed_s, double shrink_s) {
  const double fuzzing = elapsed_s - shrink_s;
  return fuzzing > 0 ? double(cases) / fuzzing : 0.0;
}

double shrink_share(double elapsed_s, double shrink_s) {
  return elapsed_s > 0 ? std::min(1.0, std::max(0.0, shrink_s / elapsed_s)) : 0.0;
}

Progress::Progress(std::ostream& os, bool live, double every_s) : os_(os), live_(live), every_s_(every_s) {}

std::string Progress::line(const ProgressSnapshot& s) const {
  std::ostringstream os;
  os << std::fixed << std::setprecision(1) << "[fuzz " << s.elapsed_s << "s] " << s.cases << " cases";
  if (s.elapsed_s > 0)
    os << " (" << std::setprecision(0) << fuzz_rate(s.cases, s.elapsed_s, s.shrink_s) << "/s, shrinking "
       << 100 * shrink_share(s.elapsed_s, s.shrink_s) << "%)";
  os << " |";
  for (const auto& [op, n] : s.per_op) os << " " << op << " " << n;
  os << " | " << s.checks << " checks, " << s.failures << (s.failures == 1 ? " failure" : " failures");
  if (!s.phase.empty()) os << " | " << s.phase;
  return os.str();
}

void Progress::clear_live() {
  if (live_ && shown_) {
    os_ << '\r' << std::string(last_len_, ' ') << '\r';
    shown_ = false;
  }
}

void Progress::update(const ProgressSnapshot& s, bool force) {
  const auto now = std::chrono::steady_clock::now();
  const double since = std::chrono::duration<double>(now - last_).count();
  if (!force && since < (live_ ? 0.25 : every_s_)) return;
  last_ = now;
  const std::string text = line(s);
  if (live_) {
    os_ << '\r' << text;
    if (text.size() < last_len_) os_ << std::string(last_len_ - text.size(), ' ');
    last_len_ = text.size();
    shown_ = true;
  } else {
    os_ << text << '\n';
    last_plain_ = text;
  }
  os_.flush();
}

void Progress::message(const std::string& text) {
  clear_live();
  os_ << text << '\n';
  os_.flush();
  last_ = {};  // show the status again right away
}

void Progress::finish(const ProgressSnapshot& s) {
  clear_live();
  const std::string text = line(s);
  if (live_ || text != last_plain_) os_ << text << '\n';
  os_.flush();
}

}  // namespace oplab::fuzz
