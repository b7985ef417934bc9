#include "fuzz/worker.h"

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstdint>
#include <cstdio>
#include <map>
#include <sstream>
#include <stdexcept>
#include <string>

#include "core/case_io.h"
#include "fuzz/interrupt.h"
#include "fuzz/wire.h"

namespace oplab::fuzz {

namespace {

// Messages both ways are framed as an 8-byte length, then the bytes: a case as JSON text
// (case_io, which keeps every double and NaN/Inf exactly), a result as wire bytes.
bool write_all(int fd, const char* p, size_t n) {
  while (n > 0) {
    const ssize_t w = write(fd, p, n);
    if (w < 0 && errno == EINTR) continue;
    if (w <= 0) return false;
    p += w;
    n -= size_t(w);
  }
  return true;
}

bool write_frame(int fd, const std::string& bytes) {
  const uint64_t n = bytes.size();
  return write_all(fd, reinterpret_cast<const char*>(&n), sizeof n) && write_all(fd, bytes.data(), bytes.size());
}

// Blocking read of exactly n bytes (the worker's side); false at EOF or error.
bool read_all(int fd, char* p, size_t n) {
  while (n > 0) {
    const ssize_t r = read(fd, p, n);
    if (r < 0 && errno == EINTR) continue;
    if (r <= 0) return false;
    p += r;
    n -= size_t(r);
  }
  return true;
}

// The worker: answers frames until the campaign closes its end of the pipe.
[[noreturn]] void worker_main(Backend& b, int in, int out) {
  signal(SIGINT, SIG_DFL);
  signal(SIGTERM, SIG_DFL);
  for (;;) {
    uint64_t n = 0;
    if (!read_all(in, reinterpret_cast<char*>(&n), sizeof n)) _exit(0);
    std::string text(n, '\0');
    if (!read_all(in, text.data(), n)) _exit(0);
    std::string answer;
    try {
      answer = evaluate_to_bytes(b, case_from_json(nlohmann::json::parse(text)));
    } catch (const std::exception& e) {
      answer = wire::encode_error(wire::Kind::Error, std::string("the worker could not read the case: ") + e.what());
    }
    if (!write_frame(out, answer)) _exit(3);
  }
}

class Worker {
 public:
  ~Worker() { stop(); }

  std::string evaluate(Backend& b, const Case& c, double timeout_s) {
    if (stop_requested()) throw Interrupted();
    if (pid_ <= 0) start(b);
    const std::string what = b.name() + ": " + c.op;
    // The worker reads the whole request before it answers, so a blocking write cannot
    // deadlock; it fails only when the worker is already dead.
    if (!write_frame(to_, case_to_json(c).dump())) throw died(what);
    std::string frame;
    switch (read_frame(frame, timeout_s)) {
      case Read::Ok: return frame;
      case Read::Stopped:
        stop();
        throw Interrupted();
      case Read::TimedOut: {
        stop();
        std::ostringstream os;
        os << what << ": hung: no answer within " << timeout_s << " s (worker killed)";
        throw KernelCrash(os.str());
      }
      case Read::Closed: break;
    }
    throw died(what);
  }

 private:
  enum class Read { Ok, Closed, TimedOut, Stopped };

  void start(Backend& b) {
    // A request written to a worker that has just died must fail with EPIPE (reported as its
    // crash), not kill the campaign with SIGPIPE.
    struct sigaction old {};
    if (sigaction(SIGPIPE, nullptr, &old) == 0 && old.sa_handler == SIG_DFL) signal(SIGPIPE, SIG_IGN);
    int req[2], ans[2];
    if (pipe2(req, O_CLOEXEC) != 0) throw std::runtime_error(std::string("pipe: ") + strerror(errno));
    if (pipe2(ans, O_CLOEXEC) != 0) {
      close(req[0]), close(req[1]);
      throw std::runtime_error(std::string("pipe: ") + strerror(errno));
    }
    std::fflush(nullptr);  // nothing buffered may be written twice
    const pid_t pid = fork();
    if (pid < 0) {
      const int e = errno;
      for (int fd : {req[0], req[1], ans[0], ans[1]}) close(fd);
      throw std::runtime_error(std::string("fork: ") + strerror(e));
    }
    if (pid == 0) {
      close(req[1]), close(ans[0]);
      worker_main(b, req[0], ans[1]);
    }
    close(req[0]), close(ans[1]);
    pid_ = pid, to_ = req[1], from_ = ans[0];
  }

  // Reads one frame, waking every 100 ms to see a stop request.
  Read read_frame(std::string& out, double timeout_s) {
    using clock = std::chrono::steady_clock;
    const auto deadline = clock::now() + std::chrono::duration_cast<clock::duration>(std::chrono::duration<double>(timeout_s));
    std::string buf;
    uint64_t want = 0;
    bool have_len = false;
    for (;;) {
      if (stop_requested()) return Read::Stopped;
      const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(deadline - clock::now()).count();
      if (left <= 0) return Read::TimedOut;
      pollfd p{from_, POLLIN, 0};
      const int r = poll(&p, 1, int(std::min<long long>(left, 100)));
      if (r < 0 && errno == EINTR) continue;
      if (r <= 0) continue;
      char chunk[1 << 16];
      const ssize_t n = read(from_, chunk, sizeof chunk);
      if (n < 0 && errno == EINTR) continue;
      if (n <= 0) return Read::Closed;
      buf.append(chunk, size_t(n));
      if (!have_len && buf.size() >= sizeof want) {
        memcpy(&want, buf.data(), sizeof want);
        buf.erase(0, sizeof want);
        have_len = true;
      }
      if (have_len && buf.size() >= want) {
        out = buf.substr(0, want);  // the worker sends nothing unasked, so nothing follows
        return Read::Ok;
      }
    }
  }

  KernelCrash died(const std::string& what) {
    int status = 0;
    close_pipes();
    if (pid_ > 0) {
      // Closed pipe: the worker is dead or dying; wait for it to say how.
      while (waitpid(pid_, &status, 0) < 0 && errno == EINTR) {
      }
    }
    pid_ = -1;
    return KernelCrash(what + ": " + how_it_died(status) + " (worker)");
  }

  void stop() {
    close_pipes();
    if (pid_ > 0) {
      kill(pid_, SIGKILL);
      int status = 0;
      while (waitpid(pid_, &status, 0) < 0 && errno == EINTR) {
      }
    }
    pid_ = -1;
  }

  void close_pipes() {
    if (to_ >= 0) close(to_);
    if (from_ >= 0) close(from_);
    to_ = from_ = -1;
  }

  pid_t pid_ = -1;
  int to_ = -1, from_ = -1;
};

}  // namespace

Result worker_evaluate(Backend& b, const Case& c, double timeout_s) {
  // One worker per backend for the life of the campaign process.
  static std::map<const Backend*, Worker> workers;
  return wire::decode(workers[&b].evaluate(b, c, timeout_s));
}

}  // namespace oplab::fuzz
