// Helpers of the liveness tests: a flag block shared with forked children
// (to say "holding now" without a pipe), and bounded polling.
#pragma once

#include <sys/mman.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <cstdint>
#include <cstdlib>
#include <functional>
#include <thread>

namespace zipc::test {

// Shared, zero-filled atomics that survive fork (MAP_SHARED | MAP_ANONYMOUS).
template <class T>
class SharedArray {
 public:
  explicit SharedArray(std::size_t n) : n_(n) {
    void* p = mmap(nullptr, n * sizeof(std::atomic<T>), PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
    flags_ = p == MAP_FAILED ? nullptr : static_cast<std::atomic<T>*>(p);
  }
  ~SharedArray() {
    if (flags_ != nullptr) munmap(flags_, n_ * sizeof(std::atomic<T>));
  }
  SharedArray(const SharedArray&) = delete;
  SharedArray& operator=(const SharedArray&) = delete;
  [[nodiscard]] bool ok() const { return flags_ != nullptr; }
  [[nodiscard]] std::size_t size() const { return n_; }
  std::atomic<T>& operator[](std::size_t i) { return flags_[i]; }

 private:
  std::size_t n_;
  std::atomic<T>* flags_ = nullptr;
};
using SharedFlags = SharedArray<std::uint64_t>;

// Raises a shared maximum.
inline void raise_max(std::atomic<std::uint64_t>& m, std::uint64_t v) {
  std::uint64_t cur = m.load();
  while (cur < v && !m.compare_exchange_weak(cur, v)) {
  }
}

// Rounds of the torture tests: ZIPC_TORTURE_ROUNDS (default def).
inline int torture_rounds(int def) {
  const char* e = std::getenv("ZIPC_TORTURE_ROUNDS");
  const int n = e != nullptr ? std::atoi(e) : 0;
  return n > 0 ? n : def;
}

// Polls cond every millisecond until it holds or `bound` passes (a liveness
// bound far above the expected time, never a timing assertion).
inline bool eventually(const std::function<bool()>& cond, std::chrono::milliseconds bound) {
  const auto end = std::chrono::steady_clock::now() + bound;
  while (std::chrono::steady_clock::now() < end) {
    if (cond()) return true;
    std::this_thread::sleep_for(std::chrono::milliseconds(1));
  }
  return cond();
}

inline double ms_since(std::chrono::steady_clock::time_point t0) {
  return std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
}

}  // namespace zipc::test
