#pragma once
// The record of a campaign: one entry per op x backend x property, counting its verdicts
// (compare/verdict.h). `oplab fuzz` and `oplab campaign` write the same records in their
// summary.json, `oplab merge` adds the shards' records up, and the report reads them.
//
//   {"op", "backend", "role", "property", "against", "dtype" (the backend's for the op),
//    "backend_origin" (external backends only: "exec: COMMAND" or "plugin: PATH"),
//    "cases"            cases judged,
//    "verdicts"         {"agree": n, "named-divergence": n, "boundary-flip": n, ...},
//    "divergences"      {name: cases} of the named-divergence verdicts,
//    "forward_only"     cases judged on the forward alone (the backend lacks that backward),
//    "worst_agreeing"   the worst error of an agreeing case: relative for a double backend,
//                       error / per-element bound for a float32 one (SPEC §9),
//    "seconds"          time spent judging, and "cases_per_second",
//    "accuracy"         float32 subjects of the differential property: compare::AccuracyStats,
//    "finding"          present when the record itself is a finding: boundary flips over the
//                       op's budget (compare/flip_rule.h),
//    "kernel_paths"     the property that counts them (differential), on a backend that names
//                       its kernel paths (Backend::kernel_paths): {path: cases that took it},
//                       every path of the op listed, 0 for one no case reached}
#include <map>
#include <ostream>
#include <string>
#include <tuple>
#include <vector>

#include <nlohmann/json.hpp>

#include "compare/accuracy_stats.h"
#include "fuzz/properties.h"

namespace oplab::fuzz {

struct CampaignRecord {
  std::string op, backend, role, property, against;
  std::string dtype = "float64";  // the type the backend computes the op in (Backend::dtype)
  std::string origin;             // an external backend's "exec: COMMAND" / "plugin: PATH"
  int64_t cases = 0, forward_only = 0;
  std::map<std::string, int64_t> verdicts, divergences;
  double worst_agreeing = 0, seconds = 0;
  bool has_accuracy = false;
  compare::AccuracyStats accuracy;
  bool counts_paths = false;
  std::map<std::string, int64_t> kernel_paths;  // every declared path, with the cases that took it

  void add(const CheckResult& r, double seconds);
  void merge(const CampaignRecord& other);
  int64_t count(compare::Verdict v) const;
  // A record that is a finding on its own (not a failing case): its reason, or "".
  std::string finding() const;
  nlohmann::json to_json() const;
  static CampaignRecord from_json(const nlohmann::json& j);
};

class CampaignRecords {
 public:
  CampaignRecord& at(const std::string& op, const Backend& b, const Property& property, const std::string& against);
  void merge(const nlohmann::json& records);  // a shard's records
  nlohmann::json to_json() const;
  // Records that are findings: {"op", "backend", "role", "property", "finding", "detail"}.
  nlohmann::json findings() const;

 private:
  std::map<std::tuple<std::string, std::string, std::string>, CampaignRecord> records_;
  std::vector<std::tuple<std::string, std::string, std::string>> order_;
  CampaignRecord& slot(const std::string& op, const std::string& backend, const std::string& property);
};

// The campaign's table of records, one line each, with its divergences, forward-only counts
// and boundary flips below it (what `oplab campaign` and `oplab fuzz` print at the end).
void print_records(std::ostream& os, const nlohmann::json& records);

// The kernel paths no case reached, per record that counts paths: "BACKEND OP: PATH" each.
std::vector<std::string> unreached_kernel_paths(const nlohmann::json& records);

}  // namespace oplab::fuzz
