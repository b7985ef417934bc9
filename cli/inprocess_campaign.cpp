// oplab::run_campaign of include/oplab/oplab.h: the fuzz campaign engine on a backend that a
// user's test owns, against a reference of its own (no built-in backend is started).
#include <unistd.h>

#include <atomic>
#include <filesystem>
#include <sstream>
#include <stdexcept>

#include "fuzz/campaign.h"
#include "oplab/oplab.h"
#include "reference/ref_backend.h"

namespace oplab {
namespace {

// The registry owns its backends; the user's stays theirs, so the registry holds this view.
class Borrowed : public Backend {
 public:
  explicit Borrowed(Backend& b) : b_(b) {}
  std::string name() const override { return b_.name(); }
  std::string description() const override { return b_.description(); }
  std::string origin() const override { return b_.origin(); }
  std::optional<std::string> unavailable_reason() const override { return b_.unavailable_reason(); }
  std::optional<std::string> unsupported_reason(const Case& c) const override { return b_.unsupported_reason(c); }
  Result run(const Case& c, const ValidParams& vp) override { return b_.run(c, vp); }
  bool out_of_process() const override { return b_.out_of_process(); }
  bool slow_start() const override { return b_.slow_start(); }
  bool is_float32() const override { return b_.is_float32(); }
  DType dtype(const std::string& op) const override { return b_.dtype(op); }
  bool computes_grads(const std::string& op) const override { return b_.computes_grads(op); }
  bool geometry_as_reference() const override { return b_.geometry_as_reference(); }
  BackendRole role() const override { return b_.role(); }
  const std::vector<Divergence>& divergences() const override { return b_.divergences(); }

 private:
  Backend& b_;
};

std::string fresh_temp_dir() {
  static std::atomic<int> n{0};
  return (std::filesystem::temp_directory_path() /
          ("oplab-campaign-" + std::to_string(::getpid()) + "-" + std::to_string(n++)))
      .string();
}

}  // namespace

std::string CampaignSummary::describe() const {
  std::ostringstream s;
  s << cases << " cases, " << checks << " checks, " << failures.size() << " failure" << (failures.size() == 1 ? "" : "s");
  if (!out.empty()) s << " (records in " << out << ")";
  for (const std::string& f : failures) s << "\n  " << f;
  return s.str();
}

CampaignSummary run_campaign(Backend& subject, const CampaignOptions& options) {
  if (subject.name() == "ref") throw std::invalid_argument("run_campaign: the subject may not be named ref (the oracle's name)");
  Registry reg;
  reg.add(make_ref_backend());
  reg.add(std::make_unique<Borrowed>(subject));
  fuzz::CampaignOptions o;
  o.ops = options.ops;
  o.backends = {subject.name()};
  o.properties = options.properties;
  o.cases = options.cases;
  o.time_s = options.seconds;
  o.seed = options.seed;
  o.keep_going = options.keep_going;
  o.shrink_time_s = options.shrink_seconds;
  if (!options.isolate) o.isolation.mode = fuzz::IsolationMode::None;
  const bool temporary = options.out.empty();
  o.out = temporary ? fresh_temp_dir() : options.out;
  std::ostringstream progress;
  const fuzz::CampaignResult r = fuzz::run_campaign(o, reg, progress);
  CampaignSummary s;
  s.cases = r.cases;
  s.checks = r.checks;
  s.seconds = r.seconds;
  s.out = o.out;
  for (const fuzz::FailureSummary& f : r.failures)
    s.failures.push_back(f.op + " / " + f.property + ": " + f.detail + " (case " + f.case_path + ")");
  if (temporary && s.clean()) {
    std::error_code ec;
    std::filesystem::remove_all(o.out, ec);
    s.out.clear();
  }
  return s;
}

}  // namespace oplab
