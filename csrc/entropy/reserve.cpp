#include "entropy/reserve.h"

#include <pthread.h>
#include <sys/mman.h>
#include <unistd.h>

#include <atomic>
#include <cstring>
#include <mutex>

namespace ascend_rand {
namespace entropy {

namespace {

std::atomic<uint64_t> g_generation{0};

void on_fork_child() { g_generation.fetch_add(1, std::memory_order_relaxed); }

size_t page_size() {
  const long p = sysconf(_SC_PAGESIZE);
  return p > 0 ? static_cast<size_t>(p) : 4096;
}

// An anonymous private mapping of at least n bytes, rounded to pages, or
// nullptr.  Advice that the kernel refuses (older kernels, other systems) is
// skipped: the fork generation still empties the reserve in a child, and the
// wipes still run.
uint8_t* map_secret(size_t* n) {
  const size_t page = page_size();
  const size_t size = (*n + page - 1) / page * page;
  void* p = mmap(nullptr, size, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  if (p == MAP_FAILED) return nullptr;
#ifdef MADV_DONTDUMP
  madvise(p, size, MADV_DONTDUMP);
#endif
#ifdef MADV_WIPEONFORK
  madvise(p, size, MADV_WIPEONFORK);
#endif
  *n = size;
  return static_cast<uint8_t*>(p);
}

void unmap_secret(uint8_t* p, size_t n) {
  if (!p) return;
  wipe(p, n);
  munmap(p, n);
}

}  // namespace

void wipe(void* p, size_t n) {
  if (n == 0) return;
  std::memset(p, 0, n);
  // The empty asm that "reads" p keeps the memset from being removed as a dead store.
  __asm__ __volatile__("" : : "r"(p) : "memory");
}

uint64_t fork_generation() { return g_generation.load(std::memory_order_relaxed); }

void install_fork_handler() {
  static std::once_flag once;
  std::call_once(once, [] { pthread_atfork(nullptr, nullptr, &on_fork_child); });
}

Reserve::~Reserve() { unmap_secret(mem_, cap_); }

void Reserve::forget_if_forked() {
  const uint64_t g = fork_generation();
  if (g != generation_) {
    // A child of the process that filled this reserve: the parent may hand out
    // the same bytes, so they are not ours to give.
    clear();
    generation_ = g;
  }
}

size_t Reserve::available() {
  forget_if_forked();
  return tail_ - head_;
}

bool Reserve::take(uint8_t* out, size_t n) {
  if (available() < n) return false;
  // Nothing to copy: and mem_ is null before the first put(), which memcpy may not
  // be passed even for 0 bytes (UBSan: tools/sanitize.sh on tests/entropy/test_entropy_reserve.py).
  if (n == 0) return true;
  std::memcpy(out, mem_ + head_, n);
  wipe(mem_ + head_, n);
  head_ += n;
  taken_ += n;
  if (head_ == tail_) head_ = tail_ = 0;
  return true;
}

bool Reserve::put(const uint8_t* data, size_t n) {
  forget_if_forked();
  if (n == 0) return true;  // (as in take(): no memcpy with a null mem_ or data)
  const size_t held = tail_ - head_;
  if (n > cap_ - tail_) {
    if (held + n <= cap_) {
      // Room after moving the held bytes to the front.
      std::memmove(mem_, mem_ + head_, held);
      wipe(mem_ + held, tail_ - held);
    } else {
      size_t size = 2 * (held + n);
      uint8_t* bigger = map_secret(&size);
      if (!bigger) return false;
      if (held) std::memcpy(bigger, mem_ + head_, held);
      unmap_secret(mem_, cap_);
      mem_ = bigger;
      cap_ = size;
    }
    head_ = 0;
    tail_ = held;
  }
  std::memcpy(mem_ + tail_, data, n);
  tail_ += n;
  return true;
}

void Reserve::clear() {
  if (mem_) wipe(mem_, cap_);
  head_ = tail_ = 0;
}

}  // namespace entropy
}  // namespace ascend_rand
