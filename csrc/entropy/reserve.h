// A reserve of secret bytes waiting to be handed out: the entropy pool's output
// buffer (ascend_rand/entropy/pool.py).
//
// What it adds over a bytearray: bytes are wiped as they leave (take), when the
// reserve is cleared, moved or freed; the memory is kept out of core dumps and,
// where the kernel allows, zeroed in a forked child (MADV_WIPEONFORK); and a
// fork generation, advanced by a pthread_atfork child handler, makes every
// reserve made before a fork() empty in the child, whichever way the fork
// happened (os.fork, a C library's fork, multiprocessing).  So no byte is
// handed out twice, to two callers or to a parent and its child.
//
// Not thread-safe by itself: the Python binding calls it with the GIL held and
// never releases it inside a call.
#pragma once

#include <cstddef>
#include <cstdint>

namespace ascend_rand {
namespace entropy {

class Reserve {
 public:
  Reserve() = default;
  ~Reserve();
  Reserve(const Reserve&) = delete;
  Reserve& operator=(const Reserve&) = delete;

  // Bytes ready to take: 0 when a fork happened since the last put.
  size_t available();
  // Copy the next n bytes to out and wipe them here; false (nothing taken)
  // when fewer than n are available.
  bool take(uint8_t* out, size_t n);
  // Append n bytes after those still available.  False when memory could not
  // be had (nothing changed).
  bool put(const uint8_t* data, size_t n);
  // Wipe every byte held.
  void clear();
  // Bytes handed out by take() since construction (a statistic).
  uint64_t taken() const { return taken_; }

 private:
  void forget_if_forked();
  uint8_t* mem_ = nullptr;  // page-aligned mapping of cap_ bytes, or nullptr
  size_t cap_ = 0;
  size_t head_ = 0;  // next byte to hand out
  size_t tail_ = 0;  // end of the bytes held
  uint64_t generation_ = 0;
  uint64_t taken_ = 0;
};

// Overwrite n bytes in a way the compiler may not drop.
void wipe(void* p, size_t n);
// The number of forks this process descends from since the module loaded (the
// child handler advances it).
uint64_t fork_generation();
// Install the child handler (once; later calls do nothing).
void install_fork_handler();

}  // namespace entropy
}  // namespace ascend_rand
