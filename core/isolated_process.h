#pragma once
// Whether this process is one that exists to evaluate cases for another (a fuzz worker or a
// per-case child, fuzz/isolate.h): a crash here already ends as the failure of the case being
// evaluated, never of oplab. Code oplab did not write and runs in its own address space (a
// plugin's evaluate, external/plugin_call.h) asks this to decide whether it needs a child of
// its own.
namespace oplab {

void mark_isolated_process();  // called once, in the child, before it evaluates anything
bool in_isolated_process();

// Evaluation stopped by Ctrl-C or kill (SIGINT, SIGTERM) rather than by the kernel: the case is
// abandoned, not failed. Deliberately not a std::exception: every `catch (const
// std::exception&)` that turns a backend's error into a verdict lets it pass, so it always
// reaches the loop that decides to stop (fuzz/interrupt.h).
struct Interrupted {};

}  // namespace oplab
