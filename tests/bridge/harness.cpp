#include "harness.hpp"

#include <algorithm>
#include <cstring>

#include "zipc/error.hpp"

namespace zipc::bridge_test {

std::vector<std::byte> payload(std::uint64_t i, std::size_t size) {
  std::vector<std::byte> p(std::max<std::size_t>(size, 8), std::byte{0x5a});
  std::memcpy(p.data(), &i, 8);
  return p;
}

RemoteReader::RemoteReader(const std::string& topic) {
  TopicOptions opt;
  opt.capacity_bytes = 1 << 22;
  opt.accept_existing = true;
  topic_ = Topic::open_or_create(topic, opt);
  auto sub = topic_.subscribe({From::oldest(), Delivery::reliable});
  thread_ = std::thread([this, s = std::move(sub)]() mutable {
    std::vector<std::byte> buf(1 << 16);
    while (!stop_.load()) {
      ReadResult r = s.read(buf, std::chrono::milliseconds(20));
      if (!r.ok()) continue;
      auto env = parse_envelope(std::span(buf.data(), r.size));
      std::uint64_t body = ~0ull;
      if (env && env->payload.size() >= 8) std::memcpy(&body, env->payload.data(), 8);
      if (!env || body != env->sequence) bad_.fetch_add(1);
      {
        std::lock_guard lock(mu_);
        seqs_.push_back(env ? env->sequence : ~0ull);
      }
      count_.fetch_add(1);
    }
  });
}

RemoteReader::~RemoteReader() {
  stop_.store(true);
  thread_.join();
}

std::vector<std::uint64_t> RemoteReader::seqs() const {
  std::lock_guard lock(mu_);
  return seqs_;
}

std::string bridge_exe() {
  return ZIPC_BRIDGE_EXE;
}

}  // namespace zipc::bridge_test
