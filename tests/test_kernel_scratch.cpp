// Heap allocations per kernel call (halide/generators/task_scratch.h). Scratch that a parallel
// task makes again at every row, roi or query it walks is kept in one slot per task, so that a
// call allocates only what a task holds for its whole run (a channel block's copy, a block of
// the gradient), not once per step. Counted through the Halide runtime's malloc hook, on every
// reduced bench shape (the main job's), forward and backward together, on halide-cpu and, for
// the ops it has kernels for, halide-cpu-f16. Before the scratch was kept per task, these
// calls made 60 (ps_roi_align's backward) to 43 000 (ms_deform_attn's) allocations each.
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

// What a call may allocate: a few blocks per task (each Func a task holds past the 16 KiB
// Halide keeps on its stack: a channel block's copy, a row's table at a wide shape) and a few
// per call. A kernel that allocates at each step of its tasks (a row, a roi, a query: tens to
// hundreds of steps per task at these shapes) lands far above.
constexpr long kBlocksPerTask = 4, kBlocksPerCall = 16;

TEST(KernelScratch, NoHeapAllocationPerStepAtTheReducedBenchShapes) {
  std::vector<Backend*> backends;
  for (HalideStorage s : {HalideStorage::Float32, HalideStorage::Float16})
    if (Backend* b = runnable_backend(halide_backend_name(HalideDevice::Cpu, s), "scratch")) backends.push_back(b);
  ASSERT_FALSE(backends.empty());
  int counted = 0;
  for (const bench::BenchShape& s : bench::standard_shapes(true)) {
    Case c = s.c;
    Tensor go(op_desc(c.op).validate(c));
    for (size_t i = 0; i < go.data.size(); ++i) go.data[i] = double(i % 7) / 7.0 - 0.5;
    c.grad_output = std::move(go);
    for (Backend* b : backends) {
      if (b->unsupported_reason(c)) continue;
      (void)evaluate(*b, c);  // the runtime's first-call setup (thread pool) is not the kernel's
      const Counts n = counts_of(*b, c);
      const long allocations = total(n.sizes);
      std::cout << "[scratch] " << b->name() << " " << s.name << ": " << allocations << " allocations, " << n.tasks
                << " tasks\n";
      EXPECT_GT(n.tasks, 0) << b->name() << " " << s.name << ": no parallel task counted";
      EXPECT_LE(allocations, kBlocksPerTask * n.tasks + kBlocksPerCall)
          << b->name() << " " << s.name << ": " << n.tasks
          << " tasks; a kernel allocates its scratch at every step of a task (" << by_size(n.sizes) << ")";
      ++counted;
    }
  }
  EXPECT_GT(counted, 20) << "the reduced bench shapes were not all run";
}

}  // namespace
}  // namespace oplab
