#include "small_shm.hpp"

#include <gtest/gtest.h>
#include <sched.h>
#include <sys/mount.h>

#include "zipc_test.hpp"

namespace zipc::test {
namespace {

constexpr int kSkip = 77;  // child: no mount namespace here

// In a child: a fresh tmpfs of `size` over dir, seen by this process only.
bool mount_private_tmpfs(const char* dir, const std::string& size) {
  if (::unshare(CLONE_NEWNS) != 0 && ::unshare(CLONE_NEWUSER | CLONE_NEWNS) != 0) return false;
  if (::mount(nullptr, "/", nullptr, MS_REC | MS_PRIVATE, nullptr) != 0) return false;
  const std::string opts = "size=" + size;
  return ::mount("tmpfs", dir, "tmpfs", 0, opts.c_str()) == 0;
}

}  // namespace

void with_small_shm(const std::string& size, const std::function<int()>& body) {
  auto child = spawn([&] {
    if (!mount_private_tmpfs("/dev/shm", size)) return kSkip;
    return body();
  });
  const ChildResult r = child.wait();
  if (r.exited && r.exit_code == kSkip) GTEST_SKIP() << "cannot mount a tmpfs in a private mount namespace here";
  EXPECT_TRUE(r.exited) << "signal " << r.signal << (r.timed_out ? " (timed out)" : "") << "\n" << r.output;
  EXPECT_EQ(r.exit_code, 0) << r.output;
}

}  // namespace zipc::test
