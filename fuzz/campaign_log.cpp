#include "fuzz/campaign_log.h"

#include <errno.h>
#include <fcntl.h>
#include <string.h>
#include <sys/file.h>
#include <unistd.h>

#include <pthread.h>

#include <atomic>
#include <cctype>
#include <filesystem>
#include <stdexcept>

#include "core/case_io.h"

namespace oplab::fuzz {

namespace fs = std::filesystem;

namespace {
// The lock must die with the campaign: the children it forks to evaluate cases would
// otherwise inherit the descriptor and hold the lock after a kill, until they end.
std::atomic<int> g_lock_fd{-1};
void close_lock_in_child() {
  const int fd = g_lock_fd.load();
  if (fd >= 0) ::close(fd);  // the child's copy only: the parent keeps the lock
}
}  // namespace

CampaignLog::CampaignLog(const std::string& dir) : dir_(dir) {
  std::error_code ec;
  fs::create_directories(fs::path(dir) / "failures", ec);
  if (ec) throw std::runtime_error(dir + ": cannot create the output folder (" + ec.message() + ")");
  const std::string lock = (fs::path(dir) / ".lock").string();
  lock_fd_ = ::open(lock.c_str(), O_RDWR | O_CREAT | O_CLOEXEC, 0644);
  if (lock_fd_ < 0) throw std::runtime_error(lock + ": cannot open (" + strerror(errno) + ")");
  if (::flock(lock_fd_, LOCK_EX | LOCK_NB) != 0) {
    ::close(lock_fd_);
    lock_fd_ = -1;
    throw std::invalid_argument("fuzz: --out " + dir + " is the folder of a campaign that is still running (give another)");
  }
  static const int registered = ::pthread_atfork(nullptr, nullptr, close_lock_in_child);
  (void)registered;
  g_lock_fd = lock_fd_;
  // One campaign per folder: what a previous one left would mix with this one's.
  for (const char* old : {"events.jsonl", "summary.json"}) fs::remove(fs::path(dir) / old, ec);
  for (const auto& e : fs::directory_iterator(fs::path(dir) / "failures", ec)) fs::remove(e.path(), ec);
  const std::string events = (fs::path(dir) / "events.jsonl").string();
  events_fd_ = ::open(events.c_str(), O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0644);
  if (events_fd_ < 0) throw std::runtime_error(events + ": cannot open (" + strerror(errno) + ")");
}

CampaignLog::~CampaignLog() {
  if (events_fd_ >= 0) ::close(events_fd_);
  if (lock_fd_ >= 0) {
    if (g_lock_fd == lock_fd_) g_lock_fd = -1;
    ::close(lock_fd_);  // releases the lock
  }
}

void CampaignLog::event(const nlohmann::json& e, bool durable) {
  const std::string line = e.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace) + "\n";
  const char* p = line.data();
  size_t left = line.size();
  while (left > 0) {
    const ssize_t w = ::write(events_fd_, p, left);
    if (w < 0 && errno == EINTR) continue;
    if (w <= 0) throw std::runtime_error(dir_ + "/events.jsonl: write failed (" + strerror(errno) + ")");
    p += w;
    left -= size_t(w);
  }
  if (durable) ::fdatasync(events_fd_);
}

void CampaignLog::write_summary(const nlohmann::json& s) {
  write_json_file_atomic((fs::path(dir_) / "summary.json").string(), s, 2);
}

std::string CampaignLog::record_path(const std::string& id) const {
  return (fs::path(dir_) / "failures" / (id + ".json")).string();
}

std::string CampaignLog::case_path(const std::string& id) const {
  return (fs::path(dir_) / "failures" / (id + ".case.json")).string();
}

void CampaignLog::save_failure(const std::string& id, const nlohmann::json& record, const Case& minimal) {
  // The case first: a record never points at a case file that is not there yet.
  write_json_file_atomic(case_path(id), case_to_json(minimal));
  write_json_file_atomic(record_path(id), record, 2);
}

std::string safe_id(const std::string& s) {
  std::string out;
  for (char ch : s) out += (std::isalnum(static_cast<unsigned char>(ch)) || ch == '.' || ch == '-' || ch == '_') ? ch : '_';
  return out;
}

}  // namespace oplab::fuzz
