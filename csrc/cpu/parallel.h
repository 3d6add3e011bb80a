// Deterministic work splitting: an element range is cut into contiguous pieces,
// one per thread.  Every piece reads its own words of the stream by index, so
// the result is the same for any number of pieces (docs/spec.md section 2) and
// whichever thread runs a piece.
//
// The pieces run on a persistent pool: starting threads per call cost about as
// much as a 10^5-element draw.  A draw that finds the pool busy (another thread
// is drawing, or a piece itself draws) starts its own threads, as before the
// pool; a process forked from one with a pool starts a new one.
#pragma once

#include <algorithm>
#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstddef>
#include <cstdint>
#include <exception>
#include <mutex>
#include <thread>
#include <vector>

#include <pthread.h>
#include <unistd.h>

namespace ascend_rand {

// Draws smaller than this stay on the calling thread: waking a thread costs
// more than generating this many elements.
constexpr size_t kMinElementsPerThread = size_t{1} << 16;
// Piece boundaries are multiples of this many elements (whole Philox blocks
// for every element width, and whole cache lines of output).
constexpr size_t kPieceAlign = 64;

inline std::atomic<int>& num_threads_setting() {
  static std::atomic<int> n{1};
  return n;
}

namespace parallel_detail {

// Pieces 0 .. count - 1, each run once by run(ctx, piece).
struct Job {
  void (*run)(void*, size_t);
  void* ctx;
  size_t count;
};

class Pool {
 public:
  // The pool of this process (a forked child gets its own; the parent's stays
  // allocated, its threads do not exist there).
  static Pool& get() {
    static Pool* pool = nullptr;
    std::mutex& create = create_mutex();
    std::lock_guard<std::mutex> lock(create);
    if (pool == nullptr || pool->pid_ != getpid()) pool = new Pool();  // never deleted
    return *pool;
  }

  // Runs the job with up to `helpers` pool threads besides the caller; false
  // (nothing run) when the pool is already running a job.
  bool run(const Job& job, size_t helpers) {
    if (busy_.exchange(true, std::memory_order_acquire)) return false;
    {
      std::unique_lock<std::mutex> lock(m_);
      while (threads_.size() < helpers) threads_.emplace_back([this] { work(); });
      job_ = job;
      next_ = 0;
      unfinished_ = job.count;
      posted_.fetch_add(1, std::memory_order_release);
    }
    wake_.notify_all();
    {
      std::unique_lock<std::mutex> lock(m_);
      take_pieces(lock);
      if (unfinished_ != 0) {
        lock.unlock();
        spin_until([this] { return done_flag_.load(std::memory_order_acquire) == posted_.load(); });
        lock.lock();
        done_.wait(lock, [this] { return unfinished_ == 0; });
      }
    }
    busy_.store(false, std::memory_order_release);
    return true;
  }

  // The lock that guards finding or making the pool.  A fork while another thread
  // held it would leave it locked for ever in the child (only the forking thread
  // survives), so fork() takes it first and releases it on both sides.
  static std::mutex& create_mutex() {
    static std::mutex* create = [] {
      auto* m = new std::mutex();  // never deleted: the handlers may run at any time
      pthread_atfork([] { create_mutex().lock(); }, [] { create_mutex().unlock(); },
                     [] { create_mutex().unlock(); });
      return m;
    }();
    return *create;
  }

 private:
  Pool() : pid_(getpid()) {}

  // Runs pieces until none is left to take; called with m_ held.
  void take_pieces(std::unique_lock<std::mutex>& lock) {
    while (next_ < job_.count) {
      const Job job = job_;
      const size_t piece = next_++;
      lock.unlock();
      job.run(job.ctx, piece);
      lock.lock();
      if (--unfinished_ == 0) {
        done_flag_.store(posted_.load(), std::memory_order_release);
        done_.notify_all();
      }
    }
  }

  // A short spin before blocking: a draw's pieces finish within microseconds of
  // each other, and a futex wake-up costs tens of them.
  template <class Ready>
  static void spin_until(Ready ready) {
    const auto until = std::chrono::steady_clock::now() + std::chrono::microseconds(50);
    while (!ready()) {
      if (std::chrono::steady_clock::now() > until) return;
      for (int i = 0; i < 64; ++i) {
#if defined(__x86_64__) || defined(__i386__)
        __builtin_ia32_pause();
#endif
      }
    }
  }

  void work() {
    uint64_t seen = 0;
    for (;;) {
      spin_until([&] { return posted_.load(std::memory_order_acquire) != seen; });
      std::unique_lock<std::mutex> lock(m_);
      wake_.wait(lock, [&] { return posted_.load() != seen; });
      seen = posted_.load();
      take_pieces(lock);
    }
  }

  const pid_t pid_;
  std::atomic<bool> busy_{false};
  std::mutex m_;
  std::condition_variable wake_, done_;
  std::vector<std::thread> threads_;  // never joined: the pool lives as long as the process
  Job job_{nullptr, nullptr, 0};      // guarded by m_, as are next_ and unfinished_
  size_t next_ = 0;
  size_t unfinished_ = 0;
  std::atomic<uint64_t> posted_{0};     // jobs posted
  std::atomic<uint64_t> done_flag_{0};  // the last job whose pieces all finished
};

// Runs pieces [0, count) on the pool, or on threads of their own when it is busy.
inline void run_pieces(const Job& job) {
  if (job.count <= 1) {
    if (job.count == 1) job.run(job.ctx, 0);
    return;
  }
  if (Pool::get().run(job, job.count - 1)) return;
  std::vector<std::thread> workers;
  workers.reserve(job.count - 1);
  for (size_t t = 1; t < job.count; ++t) workers.emplace_back([&job, t] { job.run(job.ctx, t); });
  job.run(job.ctx, 0);
  for (auto& w : workers) w.join();
}

}  // namespace parallel_detail

// Calls body(begin, end) over pieces covering [0, n).
template <class Body>
void parallel_for(size_t n, Body&& body) {
  const size_t max_threads = static_cast<size_t>(std::max(1, num_threads_setting().load()));
  const size_t threads = std::min(max_threads, std::max<size_t>(1, n / kMinElementsPerThread));
  if (threads <= 1) {
    body(size_t{0}, n);
    return;
  }
  size_t piece = (n + threads - 1) / threads;
  piece = (piece + kPieceAlign - 1) / kPieceAlign * kPieceAlign;
  const size_t count = (n + piece - 1) / piece;  // pieces that are not empty
  struct Context {
    Body* body;
    size_t n, piece;
    std::vector<std::exception_ptr> errors;
  } ctx{&body, n, piece, std::vector<std::exception_ptr>(count)};
  const parallel_detail::Job job{
      [](void* p, size_t t) {
        auto* c = static_cast<Context*>(p);
        try {
          const size_t begin = t * c->piece;
          (*c->body)(begin, std::min(c->n, begin + c->piece));
        } catch (...) {
          c->errors[t] = std::current_exception();
        }
      },
      &ctx, count};
  parallel_detail::run_pieces(job);
  for (auto& e : ctx.errors)
    if (e) std::rethrow_exception(e);
}

}  // namespace ascend_rand
