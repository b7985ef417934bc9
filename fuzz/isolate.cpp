#include "fuzz/isolate.h"

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <sstream>

#include "core/isolated_process.h"
#include "core/line_child.h"
#include "fuzz/interrupt.h"
#include "fuzz/wire.h"
#include "fuzz/worker.h"

namespace oplab::fuzz {

namespace {

// Runs in the child: do the work, send its bytes, leave without running any destructor or
// atexit handler of the parent's state (the peer bridge object must not be torn down here).
[[noreturn]] void child_main(const std::function<std::string()>& work, int fd) {
  mark_isolated_process();
  signal(SIGINT, SIG_DFL);
  signal(SIGTERM, SIG_DFL);
  std::string msg;
  try {
    msg = work();
  } catch (...) {
    _exit(4);
  }
  const char* p = msg.data();
  size_t left = msg.size();
  while (left > 0) {
    const ssize_t w = write(fd, p, left);
    if (w < 0 && errno == EINTR) continue;
    if (w <= 0) _exit(3);
    p += w;
    left -= size_t(w);
  }
  _exit(0);
}

void reap(pid_t pid, int* status) {
  while (waitpid(pid, status, 0) < 0 && errno == EINTR) {
  }
}

}  // namespace

// What the evaluation child sends: the result, or the exception evaluate() threw.
std::string evaluate_to_bytes(Backend& b, const Case& c) {
  try {
    return wire::encode_result(evaluate(b, c));
  } catch (const InvalidCase& e) {
    return wire::encode_error(wire::Kind::InvalidCase, e.what());
  } catch (const Unsupported& e) {
    return wire::encode_error(wire::Kind::Unsupported, e.what());
  } catch (const BackendUnavailable& e) {
    return wire::encode_error(wire::Kind::Unavailable, e.what());
  } catch (const FormatError& e) {
    return wire::encode_error(wire::Kind::FormatError, e.what());
  } catch (const std::exception& e) {
    return wire::encode_error(wire::Kind::Error, e.what());
  } catch (...) {
    return wire::encode_error(wire::Kind::Error, "a non-standard exception");
  }
}

std::string how_it_died(int status) {
  if (WIFEXITED(status)) return "crashed: the evaluation exited with status " + std::to_string(WEXITSTATUS(status)) + " before answering";
  return "crashed: " + describe_wait_status(status);
}

const char* isolation_mode_name(IsolationMode m) {
  switch (m) {
    case IsolationMode::None: return "none";
    case IsolationMode::Worker: return "worker";
    case IsolationMode::PerCase: return "fork";
  }
  return "?";
}

std::optional<IsolationMode> isolation_mode_from_name(const std::string& name) {
  for (IsolationMode m : {IsolationMode::None, IsolationMode::Worker, IsolationMode::PerCase})
    if (name == isolation_mode_name(m)) return m;
  return std::nullopt;
}

bool uses_worker(const Backend& b, const Isolation& iso) {
  if (iso.mode == IsolationMode::None || b.out_of_process()) return false;
  return iso.mode == IsolationMode::Worker || b.slow_start();
}

Result isolated_evaluate(Backend& b, const Case& c, const Isolation& iso) {
  if (iso.mode == IsolationMode::None || b.out_of_process()) return evaluate(b, c);
  if (uses_worker(b, iso)) return worker_evaluate(b, c, iso.timeout_s);
  return wire::decode(run_forked([&] { return evaluate_to_bytes(b, c); }, iso.timeout_s, b.name() + ": " + c.op));
}

std::string run_forked(const std::function<std::string()>& work, double timeout_s, const std::string& what) {
  if (stop_requested()) throw Interrupted();
  int fds[2];
  if (pipe2(fds, O_CLOEXEC) != 0) throw std::runtime_error(std::string("pipe: ") + strerror(errno));
  std::fflush(nullptr);  // nothing buffered may be written twice (the child leaves with _exit)
  const pid_t pid = fork();
  if (pid < 0) {
    const int e = errno;
    close(fds[0]);
    close(fds[1]);
    throw std::runtime_error(std::string("fork: ") + strerror(e));
  }
  if (pid == 0) {
    close(fds[0]);
    child_main(work, fds[1]);
  }
  close(fds[1]);

  // Read everything the child writes while it runs (a result can exceed the pipe's buffer),
  // until EOF, the deadline, or a stop request.
  using clock = std::chrono::steady_clock;
  const auto deadline = clock::now() + std::chrono::duration_cast<clock::duration>(std::chrono::duration<double>(timeout_s));
  std::string bytes;
  bool timed_out = false;
  for (;;) {
    if (stop_requested()) break;
    const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(deadline - clock::now()).count();
    if (left <= 0) {
      timed_out = true;
      break;
    }
    pollfd p{fds[0], POLLIN, 0};
    const int r = poll(&p, 1, int(std::min<long long>(left, 100)));  // wake up to see a stop request
    if (r < 0 && errno == EINTR) continue;
    if (r <= 0) continue;
    char chunk[1 << 16];
    const ssize_t n = read(fds[0], chunk, sizeof chunk);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) break;  // EOF: the child is done (or dead)
    bytes.append(chunk, size_t(n));
  }
  close(fds[0]);
  int status = 0;
  if (timed_out || stop_requested()) {
    kill(pid, SIGKILL);
    reap(pid, &status);
    if (stop_requested()) throw Interrupted();
    std::ostringstream os;
    os << "hung: no answer within " << timeout_s << " s (killed)";
    throw KernelCrash(what + ": " + os.str());
  }
  reap(pid, &status);
  if (stop_requested()) throw Interrupted();  // Ctrl-C reached the child too
  if (!(WIFEXITED(status) && WEXITSTATUS(status) == 0) || bytes.empty()) throw KernelCrash(what + ": " + how_it_died(status));
  return bytes;
}

}  // namespace oplab::fuzz
