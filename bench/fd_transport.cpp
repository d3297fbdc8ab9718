#include "fd_transport.hpp"

#include <stdexcept>

namespace zipc::bench {

bool FdPairTransport::supports(const ChannelSpec& spec, std::string* why) const {
  if (spec.senders != 1) {
    *why = "a byte stream has one writer per stream";
    return false;
  }
  if (spec.broadcast && !fan_out()) {
    *why = "fan-out baseline is measured on unix-stream only";
    return false;
  }
  if (!spec.broadcast && spec.receivers != 1) {
    *why = "a byte stream cannot share messages between readers";
    return false;
  }
  return true;
}

void FdPairTransport::create(const ChannelSpec& spec) {
  FdPairs p;
  const int n = spec.broadcast ? spec.receivers : 1;
  for (int i = 0; i < n; ++i) {
    int fds[2] = {-1, -1};
    try {
      make_pair(fds);
    } catch (...) {
      p.close_all();
      throw;
    }
    p.send.push_back(fds[0]);
    p.recv.push_back(fds[1]);
  }
  pairs_[spec.name] = std::move(p);
}

std::unique_ptr<Sender> FdPairTransport::open_sender(const ChannelSpec& spec, int /*index*/) {
  auto it = pairs_.find(spec.name);
  if (it == pairs_.end()) throw std::runtime_error(name() + ": channel '" + spec.name + "' was not created");
  auto fds = it->second.send;
  it->second.send.clear();  // owned by the sender now
  return std::make_unique<FramedSender>(std::move(fds), spec.max_message);
}

std::unique_ptr<Receiver> FdPairTransport::open_receiver(const ChannelSpec& spec, int index) {
  auto it = pairs_.find(spec.name);
  if (it == pairs_.end()) throw std::runtime_error(name() + ": channel '" + spec.name + "' was not created");
  auto& recv = it->second.recv;
  const std::size_t i = spec.broadcast ? static_cast<std::size_t>(index) : 0;
  if (i >= recv.size() || recv[i] < 0) throw std::runtime_error(name() + ": no stream for receiver");
  const int fd = recv[i];
  recv[i] = -1;
  return std::make_unique<FramedReceiver>(fd, spec.max_message);
}

void FdPairTransport::destroy(const ChannelSpec& spec) {
  auto it = pairs_.find(spec.name);
  if (it == pairs_.end()) return;
  it->second.close_all();
  pairs_.erase(it);
}

}  // namespace zipc::bench
