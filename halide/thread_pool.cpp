#include "halide/thread_pool.h"

#include <HalideRuntime.h>
#include <pthread.h>

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstdlib>
#include <mutex>
#include <thread>

#if defined(__x86_64__) || defined(__i386__)
#include <immintrin.h>
#endif

namespace oplab::halide_glue {

namespace {

void cpu_relax() {
#if defined(__x86_64__) || defined(__i386__)
  _mm_pause();
#else
  std::this_thread::yield();
#endif
}

// One parallel loop: tasks min .. min + size - 1, taken one at a time by whoever is free.
struct Loop {
  halide_task_t f;
  void* user_context;
  uint8_t* closure;
  int min, size;
  std::atomic<int> next{0}, finished{0}, status{0};

  void take_tasks() {
    for (int i = next.fetch_add(1); i < size; i = next.fetch_add(1)) {
      const int s = halide_do_task(user_context, f, min + i, closure);
      if (s != 0) {
        int none = 0;
        status.compare_exchange_strong(none, s);
      }
      finished.fetch_add(1, std::memory_order_release);
    }
  }
};

thread_local bool in_task = false;

class Pool {
 public:
  Pool() {
    const char* env = std::getenv("HL_NUM_THREADS");
    threads_ = env && std::atoi(env) > 0 ? std::atoi(env) : int(std::thread::hardware_concurrency());
    if (threads_ < 1) threads_ = 1;
  }

  void set_size(int threads) { threads_.store(threads < 1 ? 1 : threads); }

  int par_for(void* uc, halide_task_t f, int min, int size, uint8_t* closure) {
    const int helpers = threads_.load() - 1;
    if (size <= 1 || helpers <= 0 || forked_ || in_task || busy_.exchange(true)) return serial(uc, f, min, size, closure);
    start_workers(helpers);
    Loop loop{f, uc, closure, min, size};
    loop_.store(&loop);
    posted_.fetch_add(1);
    if (sleeping_.load() > 0) {
      std::lock_guard<std::mutex> lock(m_);
      cv_.notify_all();
    }
    in_task = true;
    loop.take_tasks();
    in_task = false;
    while (loop.finished.load(std::memory_order_acquire) < size) cpu_relax();
    // No worker may still hold the loop when it goes out of scope: a worker announces itself
    // (inside_) before it reads loop_, so once loop_ is null and inside_ is 0 none can.
    loop_.store(nullptr);
    while (inside_.load() != 0) cpu_relax();
    busy_.store(false);
    return loop.status.load();
  }

  void enter_call() { calls_.fetch_add(1); }
  void leave_call() { calls_.fetch_sub(1); }

  // After fork() only the forking thread exists: the child runs every loop itself.
  void on_fork_child() { forked_ = true; }

 private:
  static int serial(void* uc, halide_task_t f, int min, int size, uint8_t* closure) {
    const bool was = in_task;
    in_task = true;
    int status = 0;
    for (int i = 0; i < size && status == 0; ++i) status = halide_do_task(uc, f, min + i, closure);
    in_task = was;
    return status;
  }

  void start_workers(int helpers) {
    if (int(started_.load()) >= helpers) return;
    std::lock_guard<std::mutex> lock(start_m_);
    while (started_.load() < helpers) {
      const int index = started_.load();
      // The loop about to be posted is the worker's first: it counts posts from before it.
      const uint64_t seen = posted_.load();
      std::thread([this, index, seen] { work(index, seen); }).detach();
      started_.fetch_add(1);
    }
  }

  // Worker `index` (0-based among the helpers) takes part in loops while the pool's size
  // includes it.
  void work(int index, uint64_t seen) {
    for (;;) {
      wait_for_post(seen);
      seen = posted_.load();
      if (index >= threads_.load() - 1) continue;
      inside_.fetch_add(1);
      if (Loop* loop = loop_.load()) {
        in_task = true;
        loop->take_tasks();
        in_task = false;
      }
      inside_.fetch_sub(1);
    }
  }

  // Spins while a call runs (up to kSpinMicroseconds), else sleeps after a few yields. The
  // spin yields the core rather than pausing on it: a loop of pause instructions, on a virtual
  // machine that watches for them, measured no faster and no steadier
  // (docs/bench/2026-11-30-cpu.md).
  void wait_for_post(uint64_t seen) {
    const auto until = std::chrono::steady_clock::now() + std::chrono::microseconds(kSpinMicroseconds);
    for (int spins = 0; posted_.load() == seen; ++spins) {
      std::this_thread::yield();
      if ((spins & 15) == 15 && (calls_.load() == 0 || std::chrono::steady_clock::now() > until)) {
        std::unique_lock<std::mutex> lock(m_);
        sleeping_.fetch_add(1);
        cv_.wait(lock, [&] { return posted_.load() != seen; });
        sleeping_.fetch_sub(1);
        return;
      }
    }
  }

  std::atomic<int> threads_{1}, started_{0}, sleeping_{0}, inside_{0}, calls_{0};
  std::atomic<uint64_t> posted_{0};
  std::atomic<Loop*> loop_{nullptr};
  std::atomic<bool> busy_{false};
  bool forked_ = false;
  std::mutex m_, start_m_;
  std::condition_variable cv_;
};

// Never destroyed: its detached workers may still wait on it while the process exits.
Pool& pool() {
  static Pool* p = new Pool();
  return *p;
}

int do_par_for(void* uc, halide_task_t f, int min, int size, uint8_t* closure) {
  return pool().par_for(uc, f, min, size, closure);
}

}  // namespace

void install_thread_pool() {
  static std::once_flag once;
  std::call_once(once, [] {
    pool();
    pthread_atfork(nullptr, nullptr, [] { pool().on_fork_child(); });
    halide_set_custom_do_par_for(do_par_for);
  });
}

ThreadPoolBusy::ThreadPoolBusy() {
  install_thread_pool();
  pool().enter_call();
}
ThreadPoolBusy::~ThreadPoolBusy() { pool().leave_call(); }

void set_thread_pool_size(int threads) {
  install_thread_pool();
  pool().set_size(threads);
}

}  // namespace oplab::halide_glue
