#include "core/line_child.h"

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <initializer_list>
#include <mutex>
#include <thread>

namespace oplab {

namespace {

void close_all(std::initializer_list<int> fds) {
  for (int fd : fds)
    if (fd >= 0) close(fd);
}

// Waits for `pid` up to grace_s, then kills it; returns its wait status.
int reap(pid_t pid, double grace_s) {
  int status = 0;
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::duration<double>(grace_s);
  for (;;) {
    const pid_t r = waitpid(pid, &status, WNOHANG);
    if (r == pid) return status;
    if (r < 0 && errno != EINTR) return status;
    if (std::chrono::steady_clock::now() > deadline) break;
    std::this_thread::sleep_for(std::chrono::milliseconds(2));
  }
  ::kill(pid, SIGKILL);
  while (waitpid(pid, &status, 0) < 0 && errno == EINTR) {
  }
  return status;
}

// Writes all of p[0, n) to fd; false when the reader is gone (EPIPE) or on another error.
bool write_fd(int fd, const char* p, size_t n) {
  while (n > 0) {
    const ssize_t w = write(fd, p, n);
    if (w < 0 && errno == EINTR) continue;
    if (w <= 0) return false;
    p += w;
    n -= size_t(w);
  }
  return true;
}

bool read_fd(int fd, char* p, size_t n) {
  while (n > 0) {
    const ssize_t r = read(fd, p, n);
    if (r < 0 && errno == EINTR) continue;
    if (r <= 0) return false;
    p += r;
    n -= size_t(r);
  }
  return true;
}

}  // namespace

bool write_frame(int fd, const std::string& bytes) {
  // Length and bytes in one write: two would wake the reader twice, once for a length alone
  // (a round trip's cost, on a fuzz campaign's path taken several times a case).
  const uint64_t n = bytes.size();
  std::string frame(reinterpret_cast<const char*>(&n), sizeof n);
  frame += bytes;
  return write_fd(fd, frame.data(), frame.size());
}

bool read_frame(int fd, std::string& bytes) {
  uint64_t n = 0;
  if (!read_fd(fd, reinterpret_cast<char*>(&n), sizeof n)) return false;
  bytes.assign(n, '\0');
  return read_fd(fd, bytes.data(), n);
}

std::string describe_wait_status(int status) {
  if (WIFEXITED(status)) return "exited with status " + std::to_string(WEXITSTATUS(status));
  if (WIFSIGNALED(status)) {
    const int sig = WTERMSIG(status);
    const char* name = sigabbrev_np(sig);
    return "killed by signal " + std::to_string(sig) + " (SIG" + (name ? name : "?") + ")";
  }
  return "ended with wait status " + std::to_string(status);
}

void ignore_sigpipe_once() {
  static std::once_flag once;
  std::call_once(once, [] {
    struct sigaction old {};
    if (sigaction(SIGPIPE, nullptr, &old) == 0 && old.sa_handler == SIG_DFL) signal(SIGPIPE, SIG_IGN);
  });
}

void LineChild::start() {
  if (running()) return;
  ignore_sigpipe_once();
  if (o_.argv.empty() && !o_.body) throw ChildError(ChildError::CannotStart, "no command to run");
  if (!o_.body && access(o_.argv[0].c_str(), X_OK) != 0)
    throw ChildError(ChildError::CannotStart, o_.argv[0] + " is not an executable file");

  // O_CLOEXEC on every end: a later child must not inherit this child's pipes, or this child
  // would never see EOF on its stdin when we close our end.
  int in_pipe[2] = {-1, -1}, out_pipe[2] = {-1, -1}, err_pipe[2] = {-1, -1};
  if (pipe2(in_pipe, O_CLOEXEC) != 0 || pipe2(out_pipe, O_CLOEXEC) != 0 || pipe2(err_pipe, O_CLOEXEC) != 0) {
    const int e = errno;
    close_all({in_pipe[0], in_pipe[1], out_pipe[0], out_pipe[1], err_pipe[0], err_pipe[1]});
    throw ChildError(ChildError::CannotStart, std::string("pipe: ") + strerror(e));
  }
  int log_fd = -1;
  if (!o_.stderr_path.empty()) {
    log_fd = open(o_.stderr_path.c_str(), O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0644);
    if (log_fd < 0) {
      const int e = errno;
      close_all({in_pipe[0], in_pipe[1], out_pipe[0], out_pipe[1], err_pipe[0], err_pipe[1]});
      throw ChildError(ChildError::CannotStart, "cannot open the log " + o_.stderr_path + ": " + strerror(e));
    }
  }

  // Everything the child needs is built before fork: after fork in a threaded process only
  // async-signal-safe calls are allowed.
  std::vector<char*> argv;
  for (auto& a : o_.argv) argv.push_back(const_cast<char*>(a.c_str()));
  argv.push_back(nullptr);
  const char* cwd = o_.cwd.empty() ? nullptr : o_.cwd.c_str();
  const bool own_group = o_.own_process_group;
  if (o_.body) std::fflush(nullptr);  // nothing buffered may be written twice
  const pid_t pid = fork();
  if (pid < 0) {
    const int e = errno;
    close_all({in_pipe[0], in_pipe[1], out_pipe[0], out_pipe[1], err_pipe[0], err_pipe[1], log_fd});
    throw ChildError(ChildError::CannotStart, std::string("fork: ") + strerror(e));
  }
  if (pid == 0 && o_.body) {
    // A forked body: no exec, so the parent's ends and the exec-report pipe are closed here
    // (the parent waits on err_pipe's EOF, and sees ours at EOF only once we close its end).
    if (own_group) setpgid(0, 0);
    close_all({in_pipe[1], out_pipe[0], err_pipe[0], err_pipe[1], log_fd});
    signal(SIGPIPE, SIG_DFL);
    o_.body(in_pipe[0], out_pipe[1]);
    _exit(0);
  }
  if (pid == 0) {
    // dup2 clears O_CLOEXEC on the copies, so only stdin/stdout/stderr survive exec. err_pipe
    // carries a failing step's errno back; it closes on a successful exec.
    int e = 0;
    if (own_group) setpgid(0, 0);
    if (dup2(in_pipe[0], STDIN_FILENO) < 0 || dup2(out_pipe[1], STDOUT_FILENO) < 0 ||
        (log_fd >= 0 && dup2(log_fd, STDERR_FILENO) < 0) || (cwd && chdir(cwd) != 0)) {
      e = errno;
    } else {
      signal(SIGPIPE, SIG_DFL);  // an ignored signal would stay ignored across exec
      execv(argv[0], argv.data());
      e = errno;
    }
    (void)!write(err_pipe[1], &e, sizeof e);
    _exit(127);
  }
  close_all({in_pipe[0], out_pipe[1], err_pipe[1], log_fd});
  int child_errno = 0;
  ssize_t n;
  do n = read(err_pipe[0], &child_errno, sizeof child_errno);
  while (n < 0 && errno == EINTR);
  close(err_pipe[0]);
  pid_ = pid;
  to_ = in_pipe[1];
  from_ = out_pipe[0];
  buf_.clear();
  scanned_ = 0;
  if (n > 0) {
    stop(0);
    throw ChildError(ChildError::CannotStart, "cannot run " + o_.argv.at(0) +
                                                  (o_.cwd.empty() ? "" : " in " + o_.cwd) + ": " + strerror(child_errno));
  }
}

std::string LineChild::request(const std::string& line, double timeout_s, size_t max_bytes) {
  send(line);
  return receive(timeout_s, max_bytes);
}

void LineChild::send(const std::string& line) {
  start();
  if (!(o_.framed ? write_frame(to_, line) : write_all(line.data(), line.size()) && write_all("\n", 1)))
    died("stopped reading its input");
}

std::string LineChild::receive(double timeout_s, size_t max_bytes) {
  std::string reply;
  const int r = read_message(reply, timeout_s, max_bytes);
  if (r == 0) died("closed its output");
  if (r == -3) {
    kill_now();
    throw ChildError(ChildError::TooLong, "answered more than " + std::to_string(max_bytes) +
                                              " bytes without ending its answer (process killed)");
  }
  if (r == -2) {
    kill_now();
    throw ChildError(ChildError::Stopped, "stopped on request (process killed)");
  }
  if (r < 0) {
    kill_now();
    char buf[64];
    snprintf(buf, sizeof buf, "%g", timeout_s);
    throw ChildError(ChildError::Hung, std::string("no answer within ") + buf + " s (process killed)");
  }
  return reply;
}

void LineChild::stop(double grace_s) {
  if (to_ >= 0) close(to_);
  to_ = -1;
  if (pid_ > 0) last_status_ = reap(pid_, grace_s);
  pid_ = -1;
  if (from_ >= 0) close(from_);
  from_ = -1;
  buf_.clear();
  scanned_ = 0;
}

void LineChild::kill_now() {
  if (pid_ > 0) ::kill(pid_, SIGKILL);
  stop();
}

void LineChild::died(const std::string& what) {
  // The pipe broke: the child is dead or dying; give it a moment to say how.
  stop(1.0);
  throw ChildError(ChildError::Died, "the process " + what + " (" + describe_wait_status(last_status_) + ")");
}

bool LineChild::write_all(const char* p, size_t n) { return write_fd(to_, p, n); }

bool LineChild::take_message(std::string& msg) {
  if (o_.framed) {
    uint64_t n = 0;
    if (buf_.size() < sizeof n) return false;
    std::memcpy(&n, buf_.data(), sizeof n);
    if (buf_.size() - sizeof n < n) return false;
    msg.assign(buf_, sizeof n, n);
    buf_.erase(0, sizeof n + n);
    return true;
  }
  const size_t nl = buf_.find('\n', scanned_);
  if (nl == std::string::npos) {
    scanned_ = buf_.size();
    return false;
  }
  msg.assign(buf_, 0, nl);
  buf_.erase(0, nl + 1);
  scanned_ = 0;
  return true;
}

// Our own buffered reader: answers can be several MB and there are thousands of them, so bytes
// past the message stay in buf_ and the scan for '\n' never revisits old bytes.
int LineChild::read_message(std::string& msg, double timeout_s, size_t max_bytes) {
  using clock = std::chrono::steady_clock;
  const bool limited = timeout_s > 0;
  const auto deadline = clock::now() + std::chrono::duration_cast<clock::duration>(std::chrono::duration<double>(limited ? timeout_s : 0));
  for (;;) {
    if (take_message(msg)) return 1;
    if (o_.should_stop && o_.should_stop()) return -2;
    int wait_ms = o_.should_stop ? 100 : -1;
    if (limited) {
      const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(deadline - clock::now()).count();
      if (left <= 0) return -1;
      wait_ms = int(std::min<long long>(left, wait_ms < 0 ? (1 << 30) : wait_ms));
    }
    pollfd p{from_, POLLIN, 0};
    const int pr = poll(&p, 1, wait_ms);
    if (pr < 0 && errno == EINTR) continue;
    if (pr == 0) continue;  // the deadline and stop checks above decide
    char chunk[1 << 16];
    const ssize_t r = read(from_, chunk, sizeof chunk);
    if (r < 0 && (errno == EINTR || errno == EAGAIN)) continue;
    if (r <= 0) return 0;
    buf_.append(chunk, size_t(r));
    // Past the caller's bound: the first message, if it ended within it, else the end of it.
    if (max_bytes > 0 && buf_.size() > max_bytes) return take_message(msg) && msg.size() <= max_bytes ? 1 : -3;
  }
}

}  // namespace oplab
