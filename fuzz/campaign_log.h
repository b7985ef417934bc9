#pragma once
// What a campaign leaves on disk, written so that Ctrl-C, a kill or a crash loses nothing
// already found:
//   DIR/events.jsonl          one JSON object per line, appended and flushed per event
//                             (start, failure-found, failure, progress, end)
//   DIR/summary.json          the counts so far, rewritten atomically (temporary + rename)
//   DIR/failures/ID.json      the failure record: seed, op, backend, property, metrics, the
//                             minimal case; written atomically when found and again when shrunk
//   DIR/failures/ID.case.json the minimal case alone, for `oplab eval` and `oplab replay`
//   DIR/.lock                 held (flock) while the campaign runs: a second campaign given
//                             the same folder is refused, and a reader can tell a campaign
//                             that was killed from one still running (fuzz/campaign_state.h)
// A folder holds one campaign: a new one replaces the events, summary and failures a previous
// one left there.
#include <string>

#include <nlohmann/json.hpp>

#include "core/case.h"

namespace oplab::fuzz {

class CampaignLog {
 public:
  // Creates DIR and DIR/failures and takes DIR/.lock; throws std::invalid_argument when another
  // campaign holds the folder, std::runtime_error when it cannot be written.
  explicit CampaignLog(const std::string& dir);
  ~CampaignLog();
  CampaignLog(const CampaignLog&) = delete;
  CampaignLog& operator=(const CampaignLog&) = delete;

  // One line, one write(2) on an O_APPEND descriptor: a reader never sees half an event.
  // `durable` also asks the disk to keep it (failures), not only the kernel.
  void event(const nlohmann::json& e, bool durable = false);
  void write_summary(const nlohmann::json& s);
  void save_failure(const std::string& id, const nlohmann::json& record, const Case& minimal);

  std::string dir() const { return dir_; }
  std::string record_path(const std::string& id) const;
  std::string case_path(const std::string& id) const;

 private:
  std::string dir_;
  int events_fd_ = -1;
  int lock_fd_ = -1;
};

// A file name made of [A-Za-z0-9._-] only.
std::string safe_id(const std::string& s);

}  // namespace oplab::fuzz
