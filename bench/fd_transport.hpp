// Base for byte-stream transports whose connected fd pairs are made in the
// parent before fork (pipe, Unix stream socket, TCP loopback): the children
// inherit them. One pair per subscriber, so fan-out means one stream per
// subscriber with the sender writing each message to every one of them.
#pragma once

#include <map>
#include <string>

#include "fd_channel.hpp"

namespace zipc::bench {

class FdPairTransport : public Transport {
 public:
  bool supports(const ChannelSpec& spec, std::string* why) const override;
  void create(const ChannelSpec& spec) override;
  std::unique_ptr<Sender> open_sender(const ChannelSpec& spec, int index) override;
  std::unique_ptr<Receiver> open_receiver(const ChannelSpec& spec, int index) override;
  void destroy(const ChannelSpec& spec) override;

 protected:
  // Makes one connected pair: fds[0] is written, fds[1] is read.
  virtual void make_pair(int fds[2]) = 0;
  // Whether fan-out (one stream per subscriber) is measured for this one.
  virtual bool fan_out() const { return false; }

 private:
  std::map<std::string, FdPairs> pairs_;
};

}  // namespace zipc::bench
