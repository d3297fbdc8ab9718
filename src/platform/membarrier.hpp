// Asymmetric memory barriers (membarrier(2)): a rare, heavy barrier on one
// side lets the frequent side use only a compiler barrier. Used by topics so
// that a publisher's per-message "does anyone sleep?" check needs no fence.
#pragma once

namespace zipc::platform {

// True when MEMBARRIER_CMD_GLOBAL_EXPEDITED works here and this process is
// registered for it (registers on first use, again after fork). Cheap after
// the first call.
bool membarrier_ready() noexcept;
// Makes every registered thread on every CPU execute a full memory barrier
// before it returns. Only valid after membarrier_ready() returned true.
void membarrier_global() noexcept;

}  // namespace zipc::platform
