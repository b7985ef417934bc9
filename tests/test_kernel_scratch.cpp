// Heap allocations per pass of the kernels that keep their per-step scratch in a task's slot
// (halide/generators/task_scratch.h: grid_sample's, ms_deform_attn's backward), so that a pass
// allocates only what a task holds for its whole run (a channel block's copy, a block of the
// gradient), not once per row or query. Counted through the Halide runtime's malloc hook,
// tasks through its do_task hook, on the reduced bench shapes (the main job's) of those ops, on
// halide-cpu; a backward's counts are those of forward and backward less the forward's. The
// kernels before (7b4d075) failed every check: the 2-D grid forward 4 098 allocations in 512
// tasks, backward 10 756 in 260; 5-D 61 442 in 8 192 and 114 690 in 4 098; ms_deform_attn's
// backward 727 064 in 5 057 (encoder) and 43 208 in 308 (decoder).
#include <gtest/gtest.h>

#include <HalideRuntime.h>

#include <atomic>
#include <iostream>
#include <map>
#include <mutex>
#include <sstream>

#include "bench/bench.h"
#include "core/backend.h"
#include "core/op_desc.h"
#include "tests/halide_backends.h"

namespace oplab {
namespace {

// Bytes -> allocations of that size; the kernels' tasks allocate from every thread.
std::mutex g_mutex;
std::map<size_t, long> g_sizes;
std::atomic<long> g_tasks{0};

// Every iteration of a parallel loop (the default thread pool runs each through do_task).
int counting_do_task(void* user_context, halide_task_t f, int idx, uint8_t* closure) {
  ++g_tasks;
  return halide_default_do_task(user_context, f, idx, closure);
}
int counting_do_loop_task(void* user_context, halide_loop_task_t f, int min, int extent, uint8_t* closure,
                          void* parent) {
  g_tasks += extent;
  return halide_default_do_loop_task(user_context, f, min, extent, closure, parent);
}

void* counting_malloc(void* user_context, size_t bytes) {
  {
    std::lock_guard<std::mutex> lock(g_mutex);
    ++g_sizes[bytes];
  }
  return halide_default_malloc(user_context, bytes);
}

struct Counts {
  std::map<size_t, long> sizes;
  long tasks = 0;
};

// The hooks are the runtime's globals: installed for one call, then the defaults again.
Counts counts_of(Backend& b, const Case& c) {
  g_sizes.clear();
  g_tasks = 0;
  const halide_malloc_t malloc_before = halide_set_custom_malloc(counting_malloc);
  const halide_do_task_t task_before = halide_set_custom_do_task(counting_do_task);
  const halide_do_loop_task_t loop_before = halide_set_custom_do_loop_task(counting_do_loop_task);
  (void)evaluate(b, c);
  halide_set_custom_malloc(malloc_before);
  halide_set_custom_do_task(task_before);
  halide_set_custom_do_loop_task(loop_before);
  return {g_sizes, g_tasks.load()};
}

long total(const std::map<size_t, long>& sizes) {
  long n = 0;
  for (const auto& [bytes, count] : sizes) n += count;
  return n;
}

// "12228 x 16396 bytes, 1 x 2097164 bytes": what to look for in the kernel's schedule.
std::string by_size(const std::map<size_t, long>& sizes) {
  std::ostringstream s;
  for (const auto& [bytes, count] : sizes) s << (s.tellp() > 0 ? ", " : "") << count << " x " << bytes << " bytes";
  return s.str();
}

// What a pass may allocate: a few blocks per task (each Func a task holds past the 16 KiB
// Halide keeps on its stack: a channel block's copy, a row's table at a wide shape) and a few
// per call. A kernel that allocates at each step of its tasks (a row, a query: tens to
// hundreds of steps per task at these shapes) lands far above.
constexpr long kBlocksPerTask = 4, kBlocksPerCall = 16;

// The passes whose kernels keep their per-step scratch in a task slot (task_scratch.h).
struct Kept {
  const char* op;
  bool forward, backward;
};
constexpr Kept kKept[] = {{"grid_sample", true, true}, {"ms_deform_attn", false, true}};

void expect_few(const std::string& what, long allocations, long tasks, const std::map<size_t, long>& sizes) {
  std::cout << "[scratch] " << what << ": " << allocations << " allocations, " << tasks << " tasks\n";
  EXPECT_GT(tasks, 0) << what << ": no parallel task counted";
  EXPECT_LE(allocations, kBlocksPerTask * tasks + kBlocksPerCall)
      << what << ": " << tasks << " tasks; a kernel allocates its scratch at every step of a task (" << by_size(sizes)
      << ")";
}

TEST(KernelScratch, NoHeapAllocationPerStepAtTheReducedBenchShapes) {
  Backend* b = runnable_backend("halide-cpu", "scratch");
  if (!b) GTEST_SKIP() << "halide-cpu cannot run here";
  int counted = 0;
  for (const bench::BenchShape& s : bench::standard_shapes(true))
    for (const Kept& k : kKept) {
      if (s.c.op != k.op) continue;
      Case forward = s.c, both = s.c;
      forward.grad_output.reset();
      Tensor go(op_desc(both.op).validate(both));
      for (size_t i = 0; i < go.data.size(); ++i) go.data[i] = double(i % 7) / 7.0 - 0.5;
      both.grad_output = std::move(go);
      (void)evaluate(*b, both);  // the runtime's first-call setup (thread pool) is not the kernel's
      const Counts f = counts_of(*b, forward), fb = counts_of(*b, both);
      if (k.forward) expect_few(s.name + " forward", total(f.sizes), f.tasks, f.sizes);
      if (k.backward) expect_few(s.name + " backward", total(fb.sizes) - total(f.sizes), fb.tasks - f.tasks, fb.sizes);
      ++counted;
    }
  EXPECT_EQ(counted, 5) << "the reduced bench shapes of grid_sample (3) and ms_deform_attn (2)";
}

}  // namespace
}  // namespace oplab
