// The misuse suite's harness: every case runs in a forked child, so that a
// crash (a signal), a hang (the watchdog kills the child) or a sanitizer
// report (a non-zero exit) fails that case alone instead of ending the run.
//
//   TEST(QueueMisuse, SendOnADetachedHandleSaysDetached) {
//     isolated([] { zipc::Queue sut; EXPECT_EQ(sut.try_send({}), zipc::Status::detached); });
//   }
#pragma once

#include <gtest/gtest.h>

#include <chrono>
#include <cstddef>
#include <cstring>
#include <functional>
#include <span>
#include <string>

#include "zipc_test.hpp"

namespace zipc::misuse {

// Long enough for a loaded machine, short enough that a hang is not waited
// for the whole ctest timeout.
inline constexpr std::chrono::seconds kWatchdog{30};

inline void isolated(const std::function<void()>& body) {
  zipc::test::Child child = zipc::test::spawn([&] {
    body();
    return ::testing::Test::HasFailure() ? 1 : 0;  // the child's own expectations
  });
  const zipc::test::ChildResult r = child.wait(kWatchdog);
  EXPECT_FALSE(r.timed_out) << "the case hung: the watchdog killed it after " << kWatchdog.count() << " s";
  EXPECT_EQ(r.signal, 0) << "the case died by signal " << r.signal;
  EXPECT_TRUE(r.exited) << "the case did not exit normally";
  EXPECT_EQ(r.exit_code, 0) << "a check failed in the child (its output is above) " << r.output;
}

inline std::span<const std::byte> bytes_of(const char* s) {
  return std::as_bytes(std::span(s, std::strlen(s)));
}
inline std::string string_of(std::span<const std::byte> b) {
  return std::string(reinterpret_cast<const char*>(b.data()), b.size());
}

}  // namespace zipc::misuse
