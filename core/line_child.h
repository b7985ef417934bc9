#pragma once
// A long-lived child process spoken to one message at a time over two pipes: the one pipe layer
// of everything that lives in a process of its own (the line protocol of docs/protocol.md, the
// torchvision bridge, the fuzz campaign's workers). It starts the child (a program, or a
// function in a forked copy of this process), sends a message, waits for the answer with a
// timeout, and says how the child ended when it dies; it never lets a dead or stuck child take
// the caller down (SIGPIPE is ignored, a hang is killed). Messages are lines, or frames (an
// 8-byte length, then the bytes) for binary answers.
#include <sys/types.h>

#include <functional>
#include <stdexcept>
#include <string>
#include <vector>

namespace oplab {

// What went wrong with the child, in one line. kind tells the caller whether the child is
// gone (Died, Hung: it was killed) or never started (CannotStart).
struct ChildError : std::runtime_error {
  enum Kind { CannotStart, Died, Hung, Stopped, TooLong };
  ChildError(Kind k, const std::string& what) : std::runtime_error(what), kind(k) {}
  Kind kind;
};

// How a wait status reads, in the words every verb prints for a child that ended: "exited with
// status 3", "killed by signal 11 (SIGSEGV)". Used for exec backends here, for the fuzz
// harness's children and workers (fuzz/isolate.cpp) and for a plugin's child
// (external/plugin_call.cpp).
std::string describe_wait_status(int status);

// A write to a pipe whose reader has died raises SIGPIPE, which by default ends the whole
// harness; it is ignored process-wide, once, unless someone installed a handler, so the write
// fails with EPIPE instead and the caller reports the dead child.
void ignore_sigpipe_once();

// The frames of a framed child, for its own side: write one message, read one (blocking; false
// at EOF or on an error).
bool write_frame(int fd, const std::string& bytes);
bool read_frame(int fd, std::string& bytes);

struct LineChildOptions {
  std::vector<std::string> argv;  // argv[0] is run as given (execv), e.g. {"/bin/sh", "-c", CMD}
  std::string cwd;                // empty: the caller's working directory
  std::string stderr_path;        // empty: the caller's stderr; else appended to this file
  bool own_process_group = false; // true: Ctrl-C at the terminal does not reach the child
  // Instead of argv: run this in a forked copy of this process (no exec), reading requests from
  // `in` and writing answers to `out`; it must end with _exit. Fork before starting threads
  // that the child would need: they do not survive a fork.
  std::function<void(int in, int out)> body;
  bool framed = false;             // messages are frames (write_frame), not lines
  // Asked at least every 100 ms while an answer is awaited: true kills the child and throws
  // ChildError(Stopped) (a campaign's Ctrl-C).
  std::function<bool()> should_stop;
};

class LineChild {
 public:
  explicit LineChild(LineChildOptions o) : o_(std::move(o)) {}
  ~LineChild() { stop(); }
  LineChild(const LineChild&) = delete;
  LineChild& operator=(const LineChild&) = delete;

  bool running() const { return pid_ > 0; }
  const LineChildOptions& options() const { return o_; }

  // Starts the child if it is not running; ChildError(CannotStart) with one line when it cannot.
  void start();
  // Sends `line` (a newline is added; a frame's length, when framed) and returns the next line
  // the child writes (without its newline; the next frame, when framed), waiting at most
  // timeout_s seconds (<= 0: no limit). On EOF or EPIPE the child is reaped and
  // ChildError(Died) says how it ended (last_status() holds its wait status); past the timeout
  // it is killed and ChildError(Hung) is thrown. Starts the child first when needed.
  // `max_bytes` > 0: an answer that grows past it without ending is not waited for: the child is
  // killed and ChildError(TooLong) thrown (a backend writing gigabytes cannot make the caller
  // hold them).
  std::string request(const std::string& line, double timeout_s, size_t max_bytes = 0);
  // request() in two halves, so that several children can work at once: send() writes the
  // message (ChildError(Died) when the child stopped reading), receive() waits for the answer
  // as request() does.
  void send(const std::string& line);
  std::string receive(double timeout_s, size_t max_bytes = 0);
  int last_status() const { return last_status_; }
  // Closes the child's stdin (a well-behaved child then ends), waits up to `grace_s`, then kills.
  void stop(double grace_s = 5.0);
  // Kills at once: for a stream that can no longer be trusted (a line that is not the answer).
  void kill_now();

 private:
  [[noreturn]] void died(const std::string& what);
  bool write_all(const char* p, size_t n);
  // 1: a message; 0: EOF; -1: timed out; -2: should_stop said so; -3: past max_bytes.
  int read_message(std::string& msg, double timeout_s, size_t max_bytes = 0);
  // Takes one whole message off the front of buf_, if there is one.
  bool take_message(std::string& msg);

  LineChildOptions o_;
  pid_t pid_ = -1;
  int to_ = -1, from_ = -1;
  int last_status_ = 0;
  std::string buf_;
  size_t scanned_ = 0;
};

}  // namespace oplab
