// Tests that need a small /dev/shm: a child process whose /dev/shm is a
// private tmpfs of a given size (a mount namespace of its own), so a full
// file system can be made real without touching anyone else's.
#pragma once

#include <functional>
#include <string>

namespace zipc::test {

// Runs body in a child whose /dev/shm is a private tmpfs of `size` (e.g.
// "16m"): the test passes when body returns 0, fails when it returns anything
// else or the child dies (a SIGBUS shows as its signal), and is skipped when
// no mount namespace can be made here.
void with_small_shm(const std::string& size, const std::function<int()>& body);

}  // namespace zipc::test
