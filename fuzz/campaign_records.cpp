#include "fuzz/campaign_records.h"

#include <algorithm>
#include <iomanip>

namespace oplab::fuzz {

using json = nlohmann::json;
using compare::Verdict;

void CampaignRecord::add(const CheckResult& r, double secs) {
  ++cases;
  ++verdicts[compare::verdict_name(r.verdict)];
  seconds += secs;
  if (r.forward_only) ++forward_only;
  if (r.verdict == Verdict::NamedDivergence) ++divergences[r.detail];
  if (r.verdict == Verdict::Agree) worst_agreeing = std::max(worst_agreeing, r.worst);
  if (r.accuracy) {
    accuracy.merge(*r.accuracy);
    has_accuracy = true;
  }
  if (counts_paths)
    for (const std::string& path : r.kernel_paths) ++kernel_paths[path];
}

void CampaignRecord::merge(const CampaignRecord& o) {
  cases += o.cases, forward_only += o.forward_only, seconds += o.seconds;
  for (const auto& [k, n] : o.verdicts) verdicts[k] += n;
  for (const auto& [k, n] : o.divergences) divergences[k] += n;
  worst_agreeing = std::max(worst_agreeing, o.worst_agreeing);
  if (o.has_accuracy) accuracy.merge(o.accuracy), has_accuracy = true;
  if (o.counts_paths) {
    counts_paths = true;
    for (const auto& [k, n] : o.kernel_paths) kernel_paths[k] += n;
  }
}

int64_t CampaignRecord::count(Verdict v) const {
  auto it = verdicts.find(compare::verdict_name(v));
  return it == verdicts.end() ? 0 : it->second;
}

std::string CampaignRecord::finding() const {
  // More flips than the op's stated budget: a kernel that takes decisions the other way more
  // often than its rounding explains (compare/flip_rule.h).
  if (has_accuracy && accuracy.over_flip_budget()) return "boundary flips over budget";
  return "";
}

json CampaignRecord::to_json() const {
  json j = {{"op", op},
            {"backend", backend},
            {"role", role},
            {"property", property},
            {"against", against},
            {"dtype", dtype},
            {"cases", cases},
            {"verdicts", verdicts},
            {"divergences", divergences},
            {"forward_only", forward_only},
            {"worst_agreeing", worst_agreeing},
            {"seconds", seconds},
            {"cases_per_second", seconds > 0 ? double(cases) / seconds : 0.0}};
  if (!origin.empty()) j["backend_origin"] = origin;
  if (has_accuracy) j["accuracy"] = accuracy.to_json();
  if (const std::string f = finding(); !f.empty()) j["finding"] = f;
  if (counts_paths) j["kernel_paths"] = kernel_paths;
  return j;
}

CampaignRecord CampaignRecord::from_json(const json& j) {
  CampaignRecord r;
  r.op = j.at("op"), r.backend = j.at("backend"), r.role = j.at("role"), r.property = j.at("property");
  r.against = j.at("against");
  r.dtype = j.value("dtype", std::string("float64")), r.origin = j.value("backend_origin", std::string());
  r.cases = j.at("cases"), r.forward_only = j.at("forward_only");
  r.verdicts = j.at("verdicts").get<std::map<std::string, int64_t>>();
  r.divergences = j.at("divergences").get<std::map<std::string, int64_t>>();
  r.worst_agreeing = j.at("worst_agreeing"), r.seconds = j.at("seconds");
  if (j.contains("accuracy")) r.accuracy = compare::AccuracyStats::from_json(j["accuracy"]), r.has_accuracy = true;
  if (j.contains("kernel_paths"))
    r.kernel_paths = j["kernel_paths"].get<std::map<std::string, int64_t>>(), r.counts_paths = true;
  return r;
}

CampaignRecord& CampaignRecords::slot(const std::string& op, const std::string& backend, const std::string& property) {
  const auto key = std::make_tuple(op, backend, property);
  auto [it, fresh] = records_.try_emplace(key);
  if (fresh) order_.push_back(key);
  return it->second;
}

CampaignRecord& CampaignRecords::at(const std::string& op, const Backend& b, const Property& property,
                                    const std::string& against) {
  CampaignRecord& r = slot(op, b.name(), property.name);
  if (r.op.empty()) {
    r.op = op, r.backend = b.name(), r.role = backend_role_name(b.role()), r.property = property.name;
    // Every path the backend names, so that one no case reaches reads 0.
    const std::vector<std::string> paths = property.counts_kernel_paths ? b.kernel_paths(op) : std::vector<std::string>{};
    r.counts_paths = !paths.empty();
    for (const std::string& path : paths) r.kernel_paths[path] = 0;
  }
  r.against = against;
  r.dtype = dtype_name(b.dtype(op));
  r.origin = b.origin();
  return r;
}

void CampaignRecords::merge(const json& records) {
  for (const json& j : records) {
    CampaignRecord x = CampaignRecord::from_json(j);
    CampaignRecord& r = slot(x.op, x.backend, x.property);
    if (r.op.empty())
      r.op = x.op, r.backend = x.backend, r.role = x.role, r.property = x.property, r.against = x.against,
      r.dtype = x.dtype, r.origin = x.origin;
    r.merge(x);
  }
}

json CampaignRecords::to_json() const {
  json a = json::array();
  for (const auto& k : order_) a.push_back(records_.at(k).to_json());
  return a;
}

json CampaignRecords::findings() const {
  json a = json::array();
  for (const auto& k : order_) {
    const CampaignRecord& r = records_.at(k);
    if (const std::string f = r.finding(); !f.empty())
      a.push_back({{"op", r.op}, {"backend", r.backend}, {"role", r.role}, {"property", r.property}, {"finding", f},
                   {"detail", r.accuracy.flip_summary()}});
  }
  return a;
}

void print_records(std::ostream& os, const json& records) {
  auto n = [](const json& r, const char* v) { return r.at("verdicts").value(v, int64_t(0)); };
  const std::ios::fmtflags flags = os.flags();
  os << std::left << std::setw(16) << "op" << std::setw(31) << "backend" << std::setw(9) << "dtype" << std::setw(13)
     << "property" << std::right
     << std::setw(6) << "cases" << std::setw(6) << "agree" << std::setw(8) << "diverge" << std::setw(6) << "flip"
     << std::setw(7) << "unsupp" << std::setw(5) << "skip" << std::setw(9) << "DISAGREE" << std::setw(6) << "ERROR"
     << std::setw(10) << "worst" << std::setw(9) << "cases/s" << '\n';
  int64_t not_applicable = 0;
  for (const json& r : records) {
    // A backend that declines every case of an op (a variant of another op) says nothing here.
    if (r.value("cases", int64_t(0)) > 0 && n(r, "unsupported") == r.value("cases", int64_t(0))) {
      ++not_applicable;
      continue;
    }
    os << std::left << std::setw(16) << r.value("op", "") << std::setw(31) << r.value("backend", "") << std::setw(9)
       << r.value("dtype", "float64") << std::setw(13) << r.value("property", "") << std::right << std::setw(6) << r.value("cases", int64_t(0)) << std::setw(6)
       << n(r, "agree") << std::setw(8) << n(r, "named-divergence") << std::setw(6) << n(r, "boundary-flip")
       << std::setw(7) << n(r, "unsupported") << std::setw(5) << n(r, "skipped") << std::setw(9) << n(r, "DISAGREE")
       << std::setw(6) << n(r, "ERROR") << std::setw(10) << std::setprecision(2) << r.value("worst_agreeing", 0.0)
       << std::setw(9) << std::fixed << std::setprecision(0) << r.value("cases_per_second", 0.0) << '\n';
    os.flags(flags);
    if (r.contains("backend_origin")) os << "    " << r["backend_origin"].get<std::string>() << '\n';
    if (const int64_t f = r.value("forward_only", int64_t(0)))
      os << "    forward only (no backward kernel): " << f << '\n';
    for (const auto& [name, k] : r.at("divergences").items()) os << "    divergence " << name << ": " << k << '\n';
    if (r.contains("accuracy") && r["accuracy"].value("cases", 0) > 0)
      os << "    boundary flips: " << compare::AccuracyStats::from_json(r["accuracy"]).flip_summary() << '\n';
    if (r.contains("finding")) os << "  FINDING " << r["finding"].get<std::string>() << ": " << r["op"].get<std::string>()
                                  << " on " << r["backend"].get<std::string>() << '\n';
    if (r.contains("kernel_paths")) {
      int64_t reached = 0;
      for (const auto& [path, k] : r["kernel_paths"].items()) reached += k.get<int64_t>() > 0;
      os << "    kernel paths reached: " << reached << " of " << r["kernel_paths"].size() << '\n';
    }
  }
  if (not_applicable)
    os << "(" << not_applicable << " op x backend pairs not shown: every case unsupported, e.g. a variant of another op)\n";
  os.flags(flags);
  const std::vector<std::string> unreached = unreached_kernel_paths(records);
  if (!unreached.empty()) {
    os << "kernel paths no case reached (untested; draw cases that take them):\n";
    for (const std::string& u : unreached) os << "  " << u << '\n';
  }
}

std::vector<std::string> unreached_kernel_paths(const json& records) {
  std::vector<std::string> out;
  for (const json& r : records) {
    if (!r.contains("kernel_paths")) continue;
    // A pair whose every case was unsupported ran no kernel: no path of it is a gap of the
    // generators.
    if (r.value("cases", int64_t(0)) == r.at("verdicts").value("unsupported", int64_t(0))) continue;
    for (const auto& [path, k] : r["kernel_paths"].items())
      if (k.get<int64_t>() == 0) out.push_back(r.value("backend", "") + " " + r.value("op", "") + ": " + path);
  }
  return out;
}

}  // namespace oplab::fuzz
