// Authenticated origins (BridgeMapping::auth_key_file): what a receiving
// bridge with a key delivers is what a bridge with the same key sent; the
// rest is dropped and counted in rejected_auth.
#include <gtest/gtest.h>
#include <sys/stat.h>

#include <fstream>

#include "common.hpp"
#include "raw_nats.hpp"
#include "zipc/error.hpp"

namespace zipc::bridge_test {
namespace msg_auth_test {
namespace {

using namespace std::chrono_literals;

std::string key_file(const std::string& dir, const std::string& name, const std::string& key, mode_t mode = 0600) {
  std::string path = dir + "/" + name;
  std::ofstream(path) << key << "\n";
  ::chmod(path.c_str(), mode);
  return path;
}

std::string headers(const std::string& origin, const std::string& channel, std::uint64_t seq,
                    const std::string& extra = "") {
  return "NATS/1.0\r\nZipc-Origin: " + origin + "\r\nZipc-Channel: " + channel +
         "\r\nZipc-Seq: " + std::to_string(seq) + "\r\nZipc-Time: 1\r\n" + extra + "\r\n";
}

void run_authenticated(BridgeMode mode) {
  Pair p;
  const std::string subject = p.h.subject("prices");
  const std::string stream = mode == BridgeMode::jetstream ? "A" + std::to_string(::getpid()) : "";
  const std::string key = key_file(p.dir.path(), "k", "0123456789abcdef0123456789abcdef");
  auto ca = host_config("hostA", {p.server.url()}, p.dir.path());
  auto ma = mapping(p.h.a("prices"), subject, BridgeDirection::outbound, mode, stream);
  ma.auth_key_file = key;
  ca.mappings.push_back(ma);
  auto cb = host_config("hostB", {p.server.url()}, p.dir.path());
  auto mb = mapping(p.h.b("prices"), subject, BridgeDirection::inbound, mode, stream);
  mb.auth_key_file = key;
  cb.mappings.push_back(mb);
  Bridge a(ca), b(cb);
  a.start();
  b.start();
  ASSERT_TRUE(wait_for([&] { return a.ready() && b.ready(); }, 10s)) << a.last_error() << b.last_error();
  RemoteReader reader(p.h.b("prices"));
  TopicOptions opt;
  opt.accept_existing = true;
  Topic ta = Topic::open(p.h.a("prices"), opt);
  constexpr std::uint64_t kReal = 300;
  std::uint64_t forged = 0;
  {
    RawNats f(p.server.port());
    for (std::uint64_t i = 0; i < 20; ++i) {
      // The real origin's next sequences: unsigned, wrongly signed, signed
      // with another key's length of garbage.
      f.publish(subject, headers("hostA", p.h.a("prices"), i), std::string(100, 'x'));
      f.publish(subject, headers("hostA", p.h.a("prices"), i, "Zipc-Auth: " + std::string(64, '0') + "\r\n"), "x");
      f.publish(subject, headers("hostA", p.h.a("prices"), i, "Zipc-Auth: abc\r\n"), "x");
      f.publish(subject, "", "plain");  // no headers at all: unauthenticated as well
      forged += 4;
    }
    f.flush();
  }
  publish_range(ta, 0, kReal);
  ASSERT_TRUE(wait_for([&] { return reader.count() >= kReal && b.stats(0).rejected_auth >= forged; }, 20s))
      << reader.count() << " " << b.stats(0).rejected_auth;
  std::this_thread::sleep_for(100ms);
  expect_all_in_order(reader, kReal);
  EXPECT_EQ(b.stats(0).rejected_auth, forged);
  EXPECT_EQ(b.stats(0).lost, 0u);
  EXPECT_EQ(b.stats(0).duplicates, 0u);
}

TEST(BridgeMsgAuth, ACoreReceiverDeliversOnlyWhatItsPeerSignedAndCountsTheRest) {
  run_authenticated(BridgeMode::core);
}

TEST(BridgeMsgAuth, AJetStreamReceiverDeliversOnlyWhatItsPeerSignedAndCountsTheRest) {
  run_authenticated(BridgeMode::jetstream);
}

TEST(BridgeMsgAuth, AKeyFileThatOthersMayReadOrThatIsTooShortIsRefusedNamingIt) {
  TempDir dir;
  Hosts h;
  for (const auto& [path, why] :
       {std::pair{key_file(dir.path(), "open", "0123456789abcdef0123456789abcdef", 0644), "group or others"},
        std::pair{key_file(dir.path(), "short", "short"), "5 bytes"},
        std::pair{dir.path() + "/absent", "cannot be read"}}) {
    auto c = host_config("hostA", {"nats://127.0.0.1:1"}, dir.path());
    auto m = mapping(h.a("prices"), h.subject("prices"), BridgeDirection::outbound, BridgeMode::core);
    m.auth_key_file = path;
    c.mappings.push_back(m);
    Bridge b(c);
    try {
      b.start();
      ADD_FAILURE() << "started with " << path;
    } catch (const Error& e) {
      EXPECT_NE(std::string(e.what()).find(path), std::string::npos) << e.what();
      EXPECT_NE(std::string(e.what()).find(why), std::string::npos) << e.what();
    }
  }
}

}  // namespace
}  // namespace msg_auth_test

}  // namespace zipc::bridge_test
