#include "sync/asymmetric_wait.hpp"

namespace zipc::detail {

namespace {
constexpr std::uint32_t kPollMisses = 8;  // failed block-strategy polls in a row before skipping them
constexpr std::uint32_t kPollRetry = 64;  // then one wait in this many polls again
thread_local std::uint32_t t_poll_misses = 0;
thread_local std::uint32_t t_poll_skipped = 0;
}  // namespace

bool block_poll_worthwhile() noexcept {
  if (cpu_looks_shared()) return false;
  if (t_poll_misses < kPollMisses) return true;
  return ++t_poll_skipped % kPollRetry == 0;
}

void block_poll_result(bool caught) noexcept {
  if (caught)
    t_poll_misses = 0;
  else if (t_poll_misses < kPollMisses)
    ++t_poll_misses;
}

}  // namespace zipc::detail
