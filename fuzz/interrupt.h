#pragma once
// Ctrl-C and kill (SIGINT, SIGTERM) during a campaign: the handler only raises a flag; the
// campaign finishes the record it is writing, rewrites its summary and stops. A child that
// evaluates a case is killed by the same Ctrl-C (same process group); the flag tells the
// parent not to record that death as a crash of the kernel.
#include "core/isolated_process.h"

namespace oplab::fuzz {

// The campaign was asked to stop while a case was being evaluated; the case is abandoned
// (core/isolated_process.h: a plugin's own child throws it too).
using oplab::Interrupted;

void install_stop_handlers();  // SIGINT, SIGTERM -> request_stop()
void uninstall_stop_handlers();  // back to the previous handlers
void request_stop();
bool stop_requested();
void clear_stop();

}  // namespace oplab::fuzz
