#include "fuzz/interrupt.h"

#include <csignal>

namespace oplab::fuzz {

namespace {
volatile std::sig_atomic_t g_stop = 0;
struct sigaction g_old_int, g_old_term;
bool g_installed = false;

extern "C" void on_stop_signal(int) { g_stop = 1; }
}  // namespace

void install_stop_handlers() {
  if (g_installed) return;
  struct sigaction sa {};
  sa.sa_handler = on_stop_signal;
  sigemptyset(&sa.sa_mask);
  sa.sa_flags = 0;  // no SA_RESTART: a blocking poll/read returns EINTR and sees the flag
  sigaction(SIGINT, &sa, &g_old_int);
  sigaction(SIGTERM, &sa, &g_old_term);
  g_installed = true;
}

void uninstall_stop_handlers() {
  if (!g_installed) return;
  sigaction(SIGINT, &g_old_int, nullptr);
  sigaction(SIGTERM, &g_old_term, nullptr);
  g_installed = false;
}

void request_stop() { g_stop = 1; }
bool stop_requested() { return g_stop != 0; }
void clear_stop() { g_stop = 0; }

}  // namespace oplab::fuzz
