#pragma once
// Ctrl-C and kill (SIGINT, SIGTERM) during a campaign: the handler only raises a flag; the
// campaign finishes the record it is writing, rewrites its summary and stops. A child that
// evaluates a case is killed by the same Ctrl-C (same process group); the flag tells the
// parent not to record that death as a crash of the kernel.
namespace oplab::fuzz {

// The campaign was asked to stop while a case was being evaluated; the case is abandoned.
// Deliberately not a std::exception: every `catch (const std::exception&)` that turns a
// backend's error into a verdict lets it pass, so it always reaches the campaign loop.
struct Interrupted {};

void install_stop_handlers();  // SIGINT, SIGTERM -> request_stop()
void uninstall_stop_handlers();  // back to the previous handlers
void request_stop();
bool stop_requested();
void clear_stop();

}  // namespace oplab::fuzz
