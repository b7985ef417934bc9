#include "peer/torchvision_backend.h"
#include "peer/divergences.h"

#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <string.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cmath>
#include <cstdlib>
#include <map>
#include <utility>
#include <mutex>
#include <stdexcept>
#include <string>
#include <thread>
#include <vector>

#include "core/case_io.h"
#include "core/op_desc.h"

#ifndef OPLAB_PYTHON
#define OPLAB_PYTHON "/usr/bin/python3"
#endif
#ifndef OPLAB_PEER_SCRIPT
#define OPLAB_PEER_SCRIPT "torchvision_bridge.py"
#endif

namespace oplab {

namespace {

std::string env_or(const char* var, const char* fallback) {
  const char* v = std::getenv(var);
  return (v && *v) ? std::string(v) : std::string(fallback);
}

std::string describe_status(int status) {
  if (WIFEXITED(status)) return "exited with status " + std::to_string(WEXITSTATUS(status));
  if (WIFSIGNALED(status)) {
    const int sig = WTERMSIG(status);
    const char* name = strsignal(sig);
    return "killed by signal " + std::to_string(sig) + (name ? std::string(", ") + name : "");
  }
  return "ended with wait status " + std::to_string(status);
}

// A write to a pipe whose reader has died raises SIGPIPE, which by default kills the whole
// harness. Pipes cannot take send()'s MSG_NOSIGNAL, so the signal is ignored process-wide,
// once, and only if nobody installed a handler of their own; the write then fails with EPIPE
// and the backend reports the dead bridge instead.
void ignore_sigpipe_once() {
  static std::once_flag once;
  std::call_once(once, [] {
    struct sigaction old {};
    if (sigaction(SIGPIPE, nullptr, &old) == 0 && old.sa_handler == SIG_DFL) signal(SIGPIPE, SIG_IGN);
  });
}

// The child died or the stream broke: the caller reports it and starts a new child next time.
struct BridgeDied : std::runtime_error {
  using std::runtime_error::runtime_error;
};

// One child process `python -u script` with its stdin and stdout on pipes, spoken to one
// line at a time. Not thread-safe on its own; the backend serialises calls.
class Bridge {
 public:
  Bridge(std::string python, std::string script) : python_(std::move(python)), script_(std::move(script)) {}
  ~Bridge() { stop(); }
  Bridge(const Bridge&) = delete;
  Bridge& operator=(const Bridge&) = delete;

  bool running() const { return pid_ > 0; }

  // Starts the child; throws BridgeDied with one line when it cannot.
  void start() {
    if (running()) return;
    ignore_sigpipe_once();
    if (access(python_.c_str(), X_OK) != 0)
      throw BridgeDied(python_ + " is not an executable file (set OPLAB_PYTHON to a Python with torch and torchvision)");
    if (access(script_.c_str(), R_OK) != 0)
      throw BridgeDied("bridge script " + script_ + " cannot be read (set OPLAB_PEER_SCRIPT)");

    // O_CLOEXEC on every end: a later child must not inherit this child's pipes, or this
    // child would never see EOF on its stdin when we close our end.
    int in_pipe[2], out_pipe[2], err_pipe[2];
    if (pipe2(in_pipe, O_CLOEXEC) != 0) throw BridgeDied(std::string("pipe: ") + strerror(errno));
    if (pipe2(out_pipe, O_CLOEXEC) != 0) {
      const int e = errno;
      close_all({in_pipe[0], in_pipe[1]});
      throw BridgeDied(std::string("pipe: ") + strerror(e));
    }
    // err_pipe carries exec's errno back; it closes on a successful exec, so reading 0 bytes
    // means the interpreter is running.
    if (pipe2(err_pipe, O_CLOEXEC) != 0) {
      const int e = errno;
      close_all({in_pipe[0], in_pipe[1], out_pipe[0], out_pipe[1]});
      throw BridgeDied(std::string("pipe: ") + strerror(e));
    }

    // Everything the child needs is built before fork: after fork in a threaded process only
    // async-signal-safe calls are allowed.
    std::vector<char*> argv{const_cast<char*>(python_.c_str()), const_cast<char*>("-u"),
                            const_cast<char*>(script_.c_str()), nullptr};
    const pid_t pid = fork();
    if (pid < 0) {
      const int e = errno;
      close_all({in_pipe[0], in_pipe[1], out_pipe[0], out_pipe[1], err_pipe[0], err_pipe[1]});
      throw BridgeDied(std::string("fork: ") + strerror(e));
    }
    if (pid == 0) {
      // dup2 clears O_CLOEXEC on the copies, so only stdin/stdout/stderr survive exec.
      if (dup2(in_pipe[0], STDIN_FILENO) < 0 || dup2(out_pipe[1], STDOUT_FILENO) < 0) {
        const int e = errno;
        (void)!write(err_pipe[1], &e, sizeof e);
        _exit(127);
      }
      signal(SIGPIPE, SIG_DFL);  // an ignored signal would stay ignored across exec
      execv(argv[0], argv.data());
      const int e = errno;
      (void)!write(err_pipe[1], &e, sizeof e);
      _exit(127);
    }
    close_all({in_pipe[0], out_pipe[1], err_pipe[1]});
    int exec_errno = 0;
    ssize_t n;
    do n = read(err_pipe[0], &exec_errno, sizeof exec_errno);
    while (n < 0 && errno == EINTR);
    close(err_pipe[0]);
    pid_ = pid;
    to_ = in_pipe[1];
    from_ = out_pipe[0];
    buf_.clear();
    scanned_ = 0;
    if (n > 0) {
      stop();
      throw BridgeDied("cannot run " + python_ + ": " + strerror(exec_errno));
    }
  }

  // Sends one line (without its newline) and returns the reply line. On EOF or EPIPE the
  // child is reaped and BridgeDied says how it ended.
  std::string request(const std::string& line) {
    start();
    if (!write_all(line.data(), line.size()) || !write_all("\n", 1)) died("stopped reading its input");
    std::string reply;
    if (!read_line(reply)) died("closed its output");
    return reply;
  }

  // Closes our end of its stdin (the bridge's loop then ends), waits a while, then kills.
  void stop() {
    if (to_ >= 0) close(to_);
    to_ = -1;
    if (pid_ > 0) last_status_ = reap(pid_);
    pid_ = -1;
    if (from_ >= 0) close(from_);
    from_ = -1;
    buf_.clear();
    scanned_ = 0;
  }

  // Kills at once: for a stream that can no longer be trusted (a reply that is not JSON).
  void kill_now() {
    if (pid_ > 0) ::kill(pid_, SIGKILL);
    stop();
  }

 private:
  static void close_all(std::initializer_list<int> fds) {
    for (int fd : fds) close(fd);
  }

  static int reap(pid_t pid) {
    int status = 0;
    // Python with torch loaded takes a moment to tear down; a child stuck in a long op
    // (it only reads stdin between cases) is killed after the grace period.
    const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(5);
    for (;;) {
      const pid_t r = waitpid(pid, &status, WNOHANG);
      if (r == pid) return status;
      if (r < 0 && errno != EINTR) return status;
      if (std::chrono::steady_clock::now() > deadline) break;
      std::this_thread::sleep_for(std::chrono::milliseconds(5));
    }
    ::kill(pid, SIGKILL);
    while (waitpid(pid, &status, 0) < 0 && errno == EINTR) {
    }
    return status;
  }

  [[noreturn]] void died(const std::string& what) {
    stop();
    throw BridgeDied("the bridge process " + what + " (" + describe_status(last_status_) + ")");
  }

  bool write_all(const char* p, size_t n) {
    while (n > 0) {
      const ssize_t w = write(to_, p, n);
      if (w < 0) {
        if (errno == EINTR) continue;
        return false;  // EPIPE: the child is gone
      }
      p += w;
      n -= size_t(w);
    }
    return true;
  }

  // Our own buffered reader: replies can be several MB and there are thousands of them, so
  // bytes past the newline stay in buf_ and the scan for '\n' never revisits old bytes.
  bool read_line(std::string& line) {
    for (;;) {
      const size_t nl = buf_.find('\n', scanned_);
      if (nl != std::string::npos) {
        line.assign(buf_, 0, nl);
        buf_.erase(0, nl + 1);
        scanned_ = 0;
        return true;
      }
      scanned_ = buf_.size();
      char chunk[1 << 16];
      const ssize_t r = read(from_, chunk, sizeof chunk);
      if (r < 0 && errno == EINTR) continue;
      if (r <= 0) return false;
      buf_.append(chunk, size_t(r));
    }
  }

  std::string python_, script_;
  pid_t pid_ = -1;
  int to_ = -1, from_ = -1;
  int last_status_ = 0;
  std::string buf_;
  size_t scanned_ = 0;
};

// Hello answers (nullopt: no answer) by interpreter and script, shared so that reports need not
// start another interpreter: importing torch takes seconds.
std::mutex g_versions_mutex;
std::map<std::pair<std::string, std::string>, std::optional<json>> g_versions;

class TorchvisionBackend : public Backend {
 public:
  TorchvisionBackend()
      : python_(env_or("OPLAB_PYTHON", OPLAB_PYTHON)),
        script_(env_or("OPLAB_PEER_SCRIPT", OPLAB_PEER_SCRIPT)),
        bridge_(python_, script_) {}

  std::string name() const override { return "torchvision"; }
  bool out_of_process() const override { return true; }  // the Python bridge is a child process
  const std::vector<Divergence>& divergences() const override { return torchvision_divergences(); }

  std::string description() const override {
    return "PyTorch / torchvision (torchvision.ops, torch.nn.functional.interpolate) in float64 on the CPU, "
           "one thread, via a Python bridge (" + python_ + ")";
  }

  std::optional<std::string> unavailable_reason() const override {
    std::lock_guard<std::mutex> lock(mutex_);
    return unavailable_locked();
  }

  std::optional<std::string> unsupported_reason(const Case& c) const override {
    if (c.op == "deform_roi_pool") return std::string("torchvision has no DeformRoIPool (it is an mmcv op)");
    if (c.op == "roi_align") {
      const json mode = c.params.value("pool_mode", json("avg"));
      if (mode != "avg") return std::string("torchvision.ops.roi_align has no max mode (avg only)");
      // Measured on torchvision 0.14: roi_align with H = 0 or W = 0 and at least one roi
      // segfaults (the sampler indexes the empty image), so it is declined rather than crashed.
      const Tensor* x = c.opt("input");
      const Tensor* rois = c.opt("rois");
      if (x && rois && x->rank() == 4 && rois->rank() >= 1 && rois->dim(0) > 0 && (x->dim(2) == 0 || x->dim(3) == 0))
        return std::string("torchvision 0.14 roi_align crashes (SIGSEGV) on an input with H = 0 or W = 0");
      return std::nullopt;
    }
    if (c.op == "deform_conv2d") {
      // A NaN offset makes torchvision floor NaN into an index and read out of bounds
      // (SIGSEGV measured); the project's rule for it (SPEC §2) has no peer to compare with.
      if (const Tensor* off = c.opt("offset"))
        for (double v : off->data)
          if (std::isnan(v)) return std::string("torchvision deform_conv2d reads out of bounds on a NaN offset");
      return std::nullopt;
    }
    if (c.op == "ps_roi_align") {
      // Measured on torchvision 0.14: like roi_align, ps_roi_align with H = 0 or W = 0 and at
      // least one roi segfaults (its sampler indexes row / column -1 of the empty image).
      const Tensor* x = c.opt("input");
      const Tensor* rois = c.opt("rois");
      if (x && rois && x->rank() == 4 && rois->rank() >= 1 && rois->dim(0) > 0 && (x->dim(2) == 0 || x->dim(3) == 0))
        return std::string("torchvision 0.14 ps_roi_align crashes (SIGSEGV) on an input with H = 0 or W = 0");
      return std::nullopt;
    }
    if (c.op == "roi_pool" || c.op == "ps_roi_pool" || c.op == "interpolate") return std::nullopt;
    return "the torchvision peer has no op " + c.op;
  }

  // One raw request/answer on this backend's bridge (used by the benchmark).
  json raw(const json& request) {
    std::lock_guard<std::mutex> lock(mutex_);
    if (auto why = unavailable_locked()) throw BackendUnavailable("torchvision: " + *why);
    json j = json::parse(bridge_.request(request.dump()), nullptr, false);
    if (j.is_discarded()) throw std::runtime_error("torchvision: the bridge answered a line that is not JSON");
    if (j.is_object() && j.contains("error"))
      throw std::runtime_error("torchvision: " + j.value("error", std::string("unknown error")));
    return j;
  }

  Result run(const Case& c, const ValidParams& vp) override {
    std::lock_guard<std::mutex> lock(mutex_);
    if (auto why = unavailable_locked()) throw BackendUnavailable("torchvision: " + *why);

    std::string reply;
    try {
      json request = case_to_json(c);
      request["grads"] = grad_inputs(c);  // the inputs whose gradients the harness compares
      reply = bridge_.request(request.dump());
    } catch (const BridgeDied& e) {
      throw std::runtime_error("torchvision: " + std::string(e.what()) + " while evaluating " + c.op +
                               "; a new bridge starts on the next call");
    }

    json j;
    try {
      j = json::parse(reply);
    } catch (const json::parse_error&) {
      // Whatever wrote that line (a stray print in the bridge?) has desynchronised the stream.
      bridge_.kill_now();
      throw std::runtime_error("torchvision: the bridge answered a line that is not JSON: " + reply.substr(0, 120));
    }
    if (j.is_object() && j.contains("error")) {
      const std::string message = j["error"].is_string() ? j["error"].get<std::string>() : j["error"].dump();
      const std::string kind = j.value("kind", "failed");
      if (kind == "unsupported") throw Unsupported("torchvision: " + message);
      if (kind == "unavailable") throw BackendUnavailable("torchvision: " + message);
      throw std::runtime_error("torchvision: " + message);
    }

    Result r;
    try {
      r = result_from_json(j);
    } catch (const std::exception& e) {
      throw std::runtime_error(std::string("torchvision: malformed result from the bridge: ") + e.what());
    }
    if (!r.outputs.count("output")) throw std::runtime_error("torchvision: the bridge's result has no output");
    r.op = c.op;
    r.backend = name();
    return r;
  }

 private:
  // Starts the bridge and says hello once; the answer (or the reason there is none) is kept.
  const std::optional<std::string>& unavailable_locked() const {
    if (checked_) return unavailable_;
    checked_ = true;
    try {
      const std::string reply = bridge_.request(R"({"hello":true})");
      const json j = json::parse(reply, nullptr, false);
      if (j.is_object() && j.contains("torch") && j.contains("torchvision")) {
        versions_ = j;
      } else if (j.is_object() && j.contains("error")) {
        unavailable_ = python_ + " cannot import torch/torchvision (" + j.value("error", std::string()) +
                       "): install python3-torchvision";
      } else {
        unavailable_ = "the bridge " + script_ + " answered hello with: " + reply.substr(0, 120);
      }
    } catch (const BridgeDied& e) {
      unavailable_ = python_ + " " + script_ + ": " + e.what();
    }
    if (unavailable_) bridge_.kill_now();
    std::lock_guard<std::mutex> g(g_versions_mutex);
    g_versions[{python_, script_}] = versions_;
    return unavailable_;
  }

  std::string python_, script_;
  mutable std::mutex mutex_;  // one child, one conversation at a time
  mutable Bridge bridge_;
  mutable bool checked_ = false;
  mutable std::optional<std::string> unavailable_;
  mutable std::optional<json> versions_;
};

}  // namespace

std::unique_ptr<Backend> make_torchvision_backend() { return std::make_unique<TorchvisionBackend>(); }

nlohmann::json torchvision_bench(const nlohmann::json& request) {
  static TorchvisionBackend bench_bridge;  // its own child: timings never share it with evaluations
  return bench_bridge.raw(json{{"bench", request}});
}

std::optional<nlohmann::json> torchvision_versions() {
  const std::pair<std::string, std::string> key{env_or("OPLAB_PYTHON", OPLAB_PYTHON),
                                                env_or("OPLAB_PEER_SCRIPT", OPLAB_PEER_SCRIPT)};
  {
    std::lock_guard<std::mutex> g(g_versions_mutex);
    auto it = g_versions.find(key);
    if (it != g_versions.end()) return it->second;
  }
  TorchvisionBackend probe;
  (void)probe.unavailable_reason();  // records its answer in g_versions
  std::lock_guard<std::mutex> g(g_versions_mutex);
  return g_versions[key];
}

}  // namespace oplab
