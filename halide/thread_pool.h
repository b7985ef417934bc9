#pragma once
// The CPU kernels' parallel loops (every `parallel` schedule compiles to halide_do_par_for) run
// on this pool instead of Halide's own. While an op's call runs (a ThreadPoolBusy lives), its
// workers wait for the next loop yielding in a loop, up to kSpinMicroseconds, before they
// sleep; Halide's sleep after some 40 yields. Where waking a sleeping core costs hundreds of microseconds (a
// virtual machine's), a call made of several loops, or of several pipelines called one after
// another (deform_conv2d's backward), paid that at every loop. When the call returns, the
// workers sleep at once, so that they take no core from whatever runs next (the bench's other
// sides: their OpenMP and ONNX Runtime threads do not spin after a run either).
//
// The calling thread always takes tasks itself, so a loop finishes even with no worker (a
// forked child, whose workers did not survive the fork, runs every loop on its own thread). A
// loop started inside a task runs serially in that task.
namespace oplab::halide_glue {

// How long a worker spins for the next loop, within a call, before it sleeps.
constexpr long kSpinMicroseconds = 1000;

// An op's call (a backend's run, the bench's prepared call): while one lives, the workers spin
// between loops.
class ThreadPoolBusy {
 public:
  ThreadPoolBusy();
  ~ThreadPoolBusy();
  ThreadPoolBusy(const ThreadPoolBusy&) = delete;
  ThreadPoolBusy& operator=(const ThreadPoolBusy&) = delete;
};

// Routes halide_do_par_for to the pool, once. Every op call does it first (its ThreadPoolBusy),
// as does sizing the pool.
void install_thread_pool();

// Threads per parallel loop, the calling one included (default: HL_NUM_THREADS, else the
// machine's cores).
void set_thread_pool_size(int threads);

}  // namespace oplab::halide_glue
