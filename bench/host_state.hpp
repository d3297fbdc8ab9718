// What the host gives the guest besides the placement of its vCPUs: memory
// bandwidth and CPU time taken away (steal). The cache-line probe
// (limits.hpp) sees where the host runs the two vCPUs, not these; rows that
// stream from memory or run more threads than CPUs follow them instead
// (docs/design/bench.md, "Memory bandwidth and steal time around the extras").
#pragma once

#include <string>

namespace zipc::bench {

// One thread reading a buffer far larger than the caches (128 MiB, touched
// once per process): the best of three passes, GB/s. About 40 ms.
double memory_read_gbps();

// The guest's steal time since boot over all CPUs, ms (the "cpu" line of
// /proc/stat, its eighth value); -1 when it cannot be read.
double steal_ms();
// The same from the text of /proc/stat with `ticks_per_s` clock ticks a
// second; -1 when the text has no such value.
double parse_steal_ms(const std::string& proc_stat, long ticks_per_s);

}  // namespace zipc::bench
