#include "fuzz/merge.h"

#include <filesystem>
#include <fstream>
#include <set>
#include <stdexcept>

#include "core/case_io.h"
#include "fuzz/campaign_log.h"
#include "fuzz/campaign_records.h"
#include "fuzz/campaign_state.h"
#include "fuzz/replay_command.h"
#include "fuzz/seeds.h"

namespace oplab::fuzz {

namespace fs = std::filesystem;
using json = nlohmann::json;

namespace {

// Adds the numbers of b into a, recursively (maps of counts of any depth).
void add_counts(json& a, const json& b) {
  if (b.is_number()) {
    a = (a.is_number() ? a.get<double>() : 0.0) + b.get<double>();
    if (a.get<double>() == double(int64_t(a.get<double>()))) a = int64_t(a.get<double>());
    return;
  }
  if (!b.is_object()) return;
  if (!a.is_object()) a = json::object();
  for (const auto& [k, v] : b.items()) add_counts(a[k], v);
}

const char* kMustMatch[] = {"seed", "ops", "backends", "against", "properties", "cases"};

}  // namespace

json merge_campaigns(const std::vector<std::string>& dirs, const std::string& out) {
  if (dirs.empty()) throw std::invalid_argument("merge: give the campaign folders to join");
  std::vector<json> summaries;
  for (const auto& d : dirs) {
    if (fs::exists(out) && fs::exists(d) && fs::equivalent(fs::path(d), fs::path(out)))
      throw std::invalid_argument("merge: --out " + out + " is one of the folders being merged");
    const fs::path p = fs::path(d) / "summary.json";
    if (!fs::exists(p)) throw std::invalid_argument("merge: " + d + " has no summary.json (not a campaign folder)");
    json s = read_json_file(p.string());
    if (s.value("kind", std::string()) != "oplab-fuzz-campaign")
      throw std::invalid_argument("merge: " + p.string() + " is not the summary of a fuzz campaign");
    if (s.value("version", 0) != 2)
      throw std::invalid_argument("merge: " + p.string() + " has summary version " + s.value("version", json(0)).dump() +
                                  "; this oplab merges version 2 (rerun the shard)");
    summaries.push_back(std::move(s));
  }

  const json& first = summaries[0]["options"];
  int64_t shard_count = -1;
  std::set<int64_t> seen;
  json shards = json::array();
  for (size_t i = 0; i < summaries.size(); ++i) {
    const json& o = summaries[i]["options"];
    for (const char* key : kMustMatch)
      if (o.value(key, json()) != first.value(key, json()))
        throw std::invalid_argument("merge: " + dirs[i] + " was run with " + key + "=" + o.value(key, json()).dump() +
                                    " but " + dirs[0] + " with " + first.value(key, json()).dump());
    std::string err;
    const auto shard = parse_shard(o.value("shard", std::string("0/1")), &err);
    if (!shard) throw std::invalid_argument("merge: " + dirs[i] + ": " + err);
    if (shard_count >= 0 && shard->count != shard_count)
      throw std::invalid_argument("merge: " + dirs[i] + " is shard " + shard->str() + " of a campaign split " +
                                  std::to_string(shard_count) + " ways");
    shard_count = shard->count;
    if (!seen.insert(shard->index).second)
      throw std::invalid_argument("merge: shard " + shard->str() + " appears twice (" + dirs[i] + ")");
    const CampaignState state = read_state(dirs[i], summaries[i]);
    shards.push_back({{"dir", dirs[i]}, {"shard", shard->str()}, {"status", state.status}, {"state_detail", state.detail},
                      {"cases", summaries[i]["cases"]["total"]}, {"elapsed_s", summaries[i]["elapsed_s"]}});
  }
  json missing = json::array();
  for (int64_t k = 0; k < shard_count; ++k)
    if (!seen.count(k)) missing.push_back(std::to_string(k) + "/" + std::to_string(shard_count));

  CampaignLog log(out);  // creates OUT and OUT/failures
  json merged = {{"kind", "oplab-fuzz-merged"}, {"version", 2}, {"options", first}, {"shards", shards},
                 {"missing_shards", missing}};
  merged["options"].erase("shard");
  json cases = json::object(), skips = json::object();
  CampaignRecords records;
  double elapsed_max = 0;
  bool all_finished = missing.empty();
  for (const json& s : summaries) {
    add_counts(cases, s["cases"]);
    records.merge(s.value("records", json::array()));
    add_counts(skips, s.value("skip_reasons", json::object()));
    elapsed_max = std::max(elapsed_max, s.value("elapsed_s", 0.0));
    all_finished &= s.value("status", std::string()) == "finished";  // killed or stale shards read "running"
  }

  // Failures: every record on disk (a shard killed mid-way has records its summary lacks).
  json failures = json::array();
  for (size_t i = 0; i < dirs.size(); ++i) {
    for (json record : failure_records(dirs[i])) {
      const std::string id = safe_id(record.value("id", std::string("unnamed")));
      record["replay"] = replay_command(log.record_path(id), record.value("backend", std::string()),
                                        record.value("backend_origin", std::string()));
      record["merged_from"] = dirs[i];
      log.save_failure(id, record, case_from_json(record.at("case")));
      failures.push_back({{"id", id}, {"op", record["op"]}, {"backend", record["backend"]},
                          {"property", record["property"]}, {"detail", record["detail"]},
                          {"record", log.record_path(id)}, {"case", log.case_path(id)},
                          {"found_after_s", record["found_after_s"]}, {"shrunk", record["shrunk"]},
                          {"occurrences", record.value("occurrences", 1)}, {"shard", shards[i]["shard"]}});
    }
    // Events, each tagged with its shard; a torn last line (a killed shard) is dropped.
    std::ifstream ev(fs::path(dirs[i]) / "events.jsonl");
    std::string line;
    while (std::getline(ev, line)) {
      json e = json::parse(line, nullptr, false);
      if (e.is_discarded() || !e.is_object()) continue;
      e["shard"] = shards[i]["shard"];
      log.event(e);
    }
  }
  merged["status"] = all_finished ? "finished" : "partial";
  merged["elapsed_s"] = elapsed_max;
  merged["cases"] = cases;
  merged["records"] = records.to_json();
  merged["findings"] = records.findings();
  merged["skip_reasons"] = skips;
  merged["failures"] = failures;
  log.write_summary(merged);
  return merged;
}

}  // namespace oplab::fuzz
