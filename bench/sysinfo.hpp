// Small reads of kernel limits and machine facts used by the harness.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace zipc::bench {

// An integer from a /proc file (e.g. /proc/sys/fs/mqueue/msgsize_max); def if unreadable.
long read_proc_long(const char* path, long def);
std::string cpu_model();
std::string kernel_release();
std::string host_name();
// CPUs this process may run on, in order.
std::vector<int> allowed_cpus();
// Pins the calling process to one CPU; false if the kernel refused.
bool pin_self(int cpu);

}  // namespace zipc::bench
