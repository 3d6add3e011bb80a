// Deterministic work splitting: an element range is cut into contiguous pieces,
// one per thread.  Every piece reads its own words of the stream by index, so
// the result is the same for any number of pieces (docs/spec.md section 2).
#pragma once

#include <algorithm>
#include <atomic>
#include <cstddef>
#include <exception>
#include <thread>
#include <vector>

namespace ascend_rand {

// Draws smaller than this stay on the calling thread: starting a thread costs
// more than generating this many elements.
constexpr size_t kMinElementsPerThread = size_t{1} << 16;
// Piece boundaries are multiples of this many elements (whole Philox blocks
// for every element width, and whole cache lines of output).
constexpr size_t kPieceAlign = 64;

inline std::atomic<int>& num_threads_setting() {
  static std::atomic<int> n{1};
  return n;
}

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
  std::vector<std::thread> workers;
  std::vector<std::exception_ptr> errors(threads);
  workers.reserve(threads - 1);
  for (size_t t = 1; t < threads; ++t) {
    const size_t begin = std::min(n, t * piece);
    const size_t end = std::min(n, begin + piece);
    if (begin >= end) break;
    workers.emplace_back([&body, &errors, t, begin, end] {
      try {
        body(begin, end);
      } catch (...) {
        errors[t] = std::current_exception();
      }
    });
  }
  try {
    body(size_t{0}, std::min(n, piece));
  } catch (...) {
    errors[0] = std::current_exception();
  }
  for (auto& w : workers) w.join();
  for (auto& e : errors)
    if (e) std::rethrow_exception(e);
}

}  // namespace ascend_rand
