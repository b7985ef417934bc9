#pragma once
// Joining the folders of one campaign run as shards on several machines (`--shard K/N`) into
// one: counts summed, failures (records and cases) gathered, events concatenated with the
// shard they came from. The shards must share seed, ops, backends, oracle, properties and
// case count; a missing shard is reported, not hidden (status "partial").
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

namespace oplab::fuzz {

// Writes OUT/summary.json, OUT/events.jsonl and OUT/failures/, and returns the summary.
// Throws std::invalid_argument (one line) when the folders do not belong together, and
// FormatError / std::runtime_error for unreadable or unwritable files.
nlohmann::json merge_campaigns(const std::vector<std::string>& dirs, const std::string& out);

}  // namespace oplab::fuzz
