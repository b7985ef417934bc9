// The CPU kernels' thread pool (halide/thread_pool.h), driven through halide_do_par_for as the
// kernels' parallel loops call it: every task once, tasks of one loop at the same time, a
// task's error returned, loops inside tasks, one thread when the pool is sized so, and loops
// in a forked child (whose workers did not survive the fork).
#include <gtest/gtest.h>

#include <HalideRuntime.h>
#include <signal.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <iostream>
#include <memory>
#include <thread>
#include <vector>

#include "halide/halide_backend.h"
#include "halide/thread_pool.h"

namespace oplab {
namespace {

using Clock = std::chrono::steady_clock;

// Counts per task index, offset by the loop's min.
struct Counts {
  int min = 0;
  std::unique_ptr<std::atomic<int>[]> n;
  explicit Counts(int size, int min_) : min(min_), n(new std::atomic<int>[size]) {
    for (int i = 0; i < size; ++i) n[i] = 0;
  }
};

int count_task(void*, int idx, uint8_t* closure) {
  auto* c = reinterpret_cast<Counts*>(closure);
  c->n[idx - c->min].fetch_add(1);
  return 0;
}

class ThreadPool : public ::testing::Test {
 protected:
  void SetUp() override { halide_glue::set_thread_pool_size(2); }
};

TEST_F(ThreadPool, EveryTaskRunsOnce) {
  for (int size : {1, 2, 3, 17, 1000}) {
    Counts c(size, 5);
    ASSERT_EQ(halide_do_par_for(nullptr, count_task, 5, size, reinterpret_cast<uint8_t*>(&c)), 0);
    for (int i = 0; i < size; ++i) EXPECT_EQ(c.n[i].load(), 1) << "task " << i << " of " << size;
  }
}

// Each of two tasks waits for the other to start: the loop ends only if both run at once.
struct Meeting {
  std::atomic<bool> started[2] = {false, false};
};

int meet_task(void*, int idx, uint8_t* closure) {
  auto* m = reinterpret_cast<Meeting*>(closure);
  m->started[idx].store(true);
  const auto until = Clock::now() + std::chrono::seconds(5);
  while (!m->started[1 - idx].load())
    if (Clock::now() > until) return 1;
  return 0;
}

TEST_F(ThreadPool, TheTasksOfALoopRunAtOnce) {
  for (int round = 0; round < 20; ++round) {
    Meeting m;
    ASSERT_EQ(halide_do_par_for(nullptr, meet_task, 0, 2, reinterpret_cast<uint8_t*>(&m)), 0) << "round " << round;
    // Apart in time, so that the worker has gone to sleep before some rounds.
    if (round % 5 == 4) std::this_thread::sleep_for(std::chrono::milliseconds(5));
  }
}

int failing_task(void*, int idx, uint8_t*) { return idx == 7 ? -3 : 0; }

TEST_F(ThreadPool, ATasksErrorIsTheLoops) {
  EXPECT_EQ(halide_do_par_for(nullptr, failing_task, 0, 16, nullptr), -3);
  // And the pool goes on.
  Counts c(10, 0);
  ASSERT_EQ(halide_do_par_for(nullptr, count_task, 0, 10, reinterpret_cast<uint8_t*>(&c)), 0);
  for (int i = 0; i < 10; ++i) EXPECT_EQ(c.n[i].load(), 1);
}

// Each outer task runs a loop of 8 tasks of its own.
struct Nested {
  std::unique_ptr<Counts> inner[4];
};

int outer_task(void*, int idx, uint8_t* closure) {
  auto* nest = reinterpret_cast<Nested*>(closure);
  return halide_do_par_for(nullptr, count_task, 0, 8, reinterpret_cast<uint8_t*>(nest->inner[idx].get()));
}

TEST_F(ThreadPool, ALoopInsideATaskRunsWhole) {
  Nested nest;
  for (auto& c : nest.inner) c = std::make_unique<Counts>(8, 0);
  ASSERT_EQ(halide_do_par_for(nullptr, outer_task, 0, 4, reinterpret_cast<uint8_t*>(&nest)), 0);
  for (int o = 0; o < 4; ++o)
    for (int i = 0; i < 8; ++i) EXPECT_EQ(nest.inner[o]->n[i].load(), 1) << "outer " << o << " inner " << i;
}

struct Threads {
  std::thread::id caller;
  std::atomic<int> elsewhere{0};
};

int where_task(void*, int, uint8_t* closure) {
  auto* t = reinterpret_cast<Threads*>(closure);
  if (std::this_thread::get_id() != t->caller) t->elsewhere.fetch_add(1);
  std::this_thread::sleep_for(std::chrono::microseconds(200));
  return 0;
}

TEST_F(ThreadPool, SizeOneRunsOnTheCallingThread) {
  halide_glue::set_thread_pool_size(1);
  Threads t;
  t.caller = std::this_thread::get_id();
  ASSERT_EQ(halide_do_par_for(nullptr, where_task, 0, 50, reinterpret_cast<uint8_t*>(&t)), 0);
  EXPECT_EQ(t.elsewhere.load(), 0);
  // The bench's --threads goes through the backend's setter to the same pool.
  set_halide_threads(2);
  Threads t2;
  t2.caller = std::this_thread::get_id();
  ASSERT_EQ(halide_do_par_for(nullptr, where_task, 0, 50, reinterpret_cast<uint8_t*>(&t2)), 0);
  EXPECT_GT(t2.elsewhere.load(), 0);
}

double process_cpu_ms() {
  timespec t{};
  clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &t);
  return double(t.tv_sec) * 1e3 + double(t.tv_nsec) * 1e-6;
}

// The process's CPU time while this thread sleeps 20 ms right after a loop: what the workers
// burn waiting for the next one.
double cpu_ms_while_idle_after_a_loop() {
  Counts c(64, 0);
  EXPECT_EQ(halide_do_par_for(nullptr, count_task, 0, 64, reinterpret_cast<uint8_t*>(&c)), 0);
  const double before = process_cpu_ms();
  std::this_thread::sleep_for(std::chrono::milliseconds(20));
  return process_cpu_ms() - before;
}

// Within a call the workers spin for the next loop (up to kSpinMicroseconds); once the call is
// over they sleep at once, taking no core from what runs next (the bench's other sides).
TEST_F(ThreadPool, WorkersSpinOnlyWithinACall) {
  double within = 0, after = 0;
  for (int round = 0; round < 3; ++round) {
    {
      halide_glue::ThreadPoolBusy call;
      within = std::max(within, cpu_ms_while_idle_after_a_loop());
    }
    after = std::max(after, cpu_ms_while_idle_after_a_loop());
  }
  std::cout << "[pool] CPU ms while idle 20 ms: within a call " << within << ", after it " << after << "\n";
  EXPECT_GT(within, 0.5 * halide_glue::kSpinMicroseconds / 1000.0);
  EXPECT_LT(after, 0.3);
}

TEST_F(ThreadPool, AForkedChildRunsItsLoops) {
  // Workers exist in the parent before the fork.
  Counts warm(4, 0);
  ASSERT_EQ(halide_do_par_for(nullptr, count_task, 0, 4, reinterpret_cast<uint8_t*>(&warm)), 0);
  const pid_t pid = fork();
  ASSERT_GE(pid, 0);
  if (pid == 0) {
    Counts c(100, 0);
    int bad = halide_do_par_for(nullptr, count_task, 0, 100, reinterpret_cast<uint8_t*>(&c)) != 0;
    for (int i = 0; i < 100; ++i) bad |= c.n[i].load() != 1;
    _exit(bad);
  }
  int status = 0;
  const auto until = Clock::now() + std::chrono::seconds(20);
  pid_t done = 0;
  while ((done = waitpid(pid, &status, WNOHANG)) == 0 && Clock::now() < until)
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  if (done == 0) {
    kill(pid, SIGKILL);
    waitpid(pid, &status, 0);
    FAIL() << "the forked child's loop did not finish";
  }
  ASSERT_TRUE(WIFEXITED(status));
  EXPECT_EQ(WEXITSTATUS(status), 0);
}

}  // namespace
}  // namespace oplab
