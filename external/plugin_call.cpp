#include "external/plugin_call.h"

#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <limits>

#include "core/case.h"
#include "core/isolated_process.h"
#include "core/line_child.h"
#include "external/plugin_memory.h"

namespace oplab {

namespace {

constexpr size_t kMessageBytes = 512;
// In the slot for evaluate's return value until the child writes it: a child that ends
// without writing it (it cannot return normally and skip the write) is told from one that did.
constexpr int64_t kNoCode = std::numeric_limits<int64_t>::min();

std::string why_it_died(int status) {
  if (WIFSIGNALED(status)) {
    const int sig = WTERMSIG(status);
    std::string s = "crashed in its evaluate: " + describe_wait_status(status);
    if (sig == SIGSEGV || sig == SIGBUS)
      s += ": it touched memory outside the tensors it was given (each lies between inaccessible pages) or its own "
           "memory is corrupt";
    return s;
  }
  return "ended the process from its evaluate (exit status " + std::to_string(WEXITSTATUS(status)) +
         "): a plugin must return a code, not exit";
}

}  // namespace

PluginAnswer call_plugin(const oplab_plugin_v1& api, const oplab_call_v1& call, const std::string& what) {
  GuardedBytes message(kMessageBytes, 0, 1);
  GuardedBytes code(sizeof(int64_t), uint64_t(kNoCode), sizeof(int64_t));
  auto evaluate = [&] {
    const int64_t c = api.evaluate(&call, reinterpret_cast<char*>(message.data()), kMessageBytes);
    std::memcpy(code.data(), &c, sizeof c);
  };
  if (in_isolated_process()) {
    evaluate();
  } else {
    std::fflush(nullptr);  // nothing buffered may be written twice (the child leaves with _exit)
    const pid_t pid = fork();
    if (pid < 0) throw std::runtime_error(what + ": cannot fork a child for the plugin's evaluate: " + std::strerror(errno));
    if (pid == 0) {
      mark_isolated_process();
      signal(SIGINT, SIG_DFL);
      signal(SIGTERM, SIG_DFL);
      evaluate();
      _exit(0);  // no destructor or atexit handler of this process's state runs here
    }
    int status = 0;
    while (waitpid(pid, &status, 0) < 0)
      if (errno != EINTR) throw std::runtime_error(what + ": waiting for the plugin's child: " + std::strerror(errno));
    if (WIFSIGNALED(status) && (WTERMSIG(status) == SIGINT || WTERMSIG(status) == SIGTERM)) throw Interrupted{};
    if (!(WIFEXITED(status) && WEXITSTATUS(status) == 0)) throw KernelCrash(what + " " + why_it_died(status));
  }
  int64_t c = 0;
  std::memcpy(&c, code.data(), sizeof c);
  if (c == kNoCode) throw KernelCrash(what + " returned from its evaluate without oplab seeing its code");
  PluginAnswer a;
  a.code = int32_t(c);
  const char* m = reinterpret_cast<const char*>(message.data());
  a.message.assign(m, strnlen(m, kMessageBytes));
  return a;
}

}  // namespace oplab
