#include "fuzz/campaign_state.h"

#include <fcntl.h>
#include <sys/file.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <ctime>
#include <filesystem>
#include <fstream>

#include "core/case_io.h"

namespace oplab::fuzz {

namespace fs = std::filesystem;
using json = nlohmann::json;

namespace {

std::string host_name() {
  char buf[256] = {0};
  if (::gethostname(buf, sizeof buf - 1) != 0) return "?";
  return buf;
}

double unix_now() {
  return std::chrono::duration<double>(std::chrono::system_clock::now().time_since_epoch()).count();
}

// Whether some process holds DIR/.lock: the campaign that writes DIR is alive.
bool lock_held(const std::string& dir) {
  const std::string path = (fs::path(dir) / ".lock").string();
  const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) return false;
  const bool held = ::flock(fd, LOCK_SH | LOCK_NB) != 0;
  ::close(fd);
  return held;
}

// "failure-found at 12.3 s" from the last complete line of DIR/events.jsonl.
std::string last_event(const std::string& dir) {
  std::ifstream in(fs::path(dir) / "events.jsonl");
  std::string line, last;
  while (std::getline(in, line))
    if (!line.empty()) last = line;
  const json e = json::parse(last, nullptr, false);
  if (e.is_discarded() || !e.is_object()) return "none readable";
  std::string s = e.value("event", std::string("?"));
  if (e.contains("id")) s += " " + e["id"].get<std::string>();
  if (e.contains("elapsed_s")) s += " at " + std::to_string(int64_t(e["elapsed_s"].get<double>())) + " s";
  return s;
}

}  // namespace

json heartbeat() {
  const std::time_t t = std::time(nullptr);
  char buf[32];
  std::strftime(buf, sizeof buf, "%Y-%m-%dT%H:%M:%SZ", std::gmtime(&t));
  return {{"time", buf}, {"unix_s", unix_now()}, {"pid", int64_t(::getpid())}, {"host", host_name()}};
}

CampaignState read_state(const std::string& dir, const json& summary) {
  CampaignState st{summary.value("status", std::string("?")), ""};
  if (st.status != "running") return st;
  const json hb = summary.value("heartbeat", json::object());
  const std::string host = hb.value("host", std::string());
  const double age = unix_now() - hb.value("unix_s", 0.0);
  const std::string who = "pid " + std::to_string(hb.value("pid", int64_t(0))) + " on " + (host.empty() ? "?" : host);
  if (host == host_name()) {
    if (lock_held(dir)) return st;
    st.status = "killed";
  } else if (age > kStaleAfterS) {
    st.status = "stale";
  } else {
    return st;
  }
  st.detail = st.status + ": no heartbeat since " + hb.value("time", std::string("?")) + " (" + who +
              (st.status == "killed" ? " is gone" : "") + "); last event: " + last_event(dir);
  return st;
}

std::vector<json> failure_records(const std::string& dir) {
  const fs::path fdir = fs::path(dir) / "failures";
  std::vector<fs::path> files;
  if (fs::exists(fdir))
    for (const auto& e : fs::directory_iterator(fdir)) {
      const std::string name = e.path().filename().string();
      const bool is_case = name.size() >= 10 && name.compare(name.size() - 10, 10, ".case.json") == 0;
      if (e.path().extension() == ".json" && !is_case) files.push_back(e.path());
    }
  std::sort(files.begin(), files.end());
  std::vector<json> out;
  for (const fs::path& f : files) {
    json record = json::parse(std::ifstream(f), nullptr, false);
    if (!record.is_discarded() && record.value("kind", std::string()) == "oplab-fuzz-failure") out.push_back(record);
  }
  return out;
}

}  // namespace oplab::fuzz
