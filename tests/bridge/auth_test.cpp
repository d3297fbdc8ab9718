// NATS credentials pass through the bridge: user/password, token, a .creds
// file (decentralized JWT auth), TLS with a private CA, mutual TLS with a
// client certificate; wrong or missing
// credentials give a clear error and no traffic. A real nats-server each.
#include <gtest/gtest.h>

#include <cstdlib>
#include <fstream>
#include <optional>

#include "common.hpp"
#include "nats_identity.hpp"

namespace zipc::bridge_test {
namespace auth_test {
namespace {

using namespace std::chrono_literals;

std::string lower(std::string s) {
  for (char& c : s) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return s;
}

// The credentials of `from` into `to` (the rest of `to` stays: servers, waits).
void copy_credentials(NatsOptions& to, const NatsOptions& from) {
  to.user = from.user;
  to.password = from.password;
  to.token = from.token;
  to.creds_file = from.creds_file;
  to.tls = from.tls;
  to.tls_ca = from.tls_ca;
  to.tls_cert = from.tls_cert;
  to.tls_key = from.tls_key;
}

// Host A publishes on its topic, host B's reader must see every message.
void expect_flow(const std::string& url, const NatsOptions& auth_a, const NatsOptions& auth_b, const TempDir& dir) {
  Hosts h;
  auto ca = host_config("hostA", {url}, dir.path());
  auto cb = host_config("hostB", {url}, dir.path());
  copy_credentials(ca.nats, auth_a);
  copy_credentials(cb.nats, auth_b);
  ca.mappings.push_back(mapping(h.a("prices"), h.subject("prices"), BridgeDirection::outbound, BridgeMode::core));
  cb.mappings.push_back(mapping(h.b("prices"), h.subject("prices"), BridgeDirection::inbound, BridgeMode::core));
  Bridge a(ca), b(cb);
  a.start();
  b.start();
  ASSERT_TRUE(wait_for([&] { return a.ready() && b.ready(); }, 15s)) << a.last_error() << " | " << b.last_error();
  RemoteReader reader(h.b("prices"));
  auto topic = Topic::open(h.a("prices"));
  const std::uint64_t n = 500;
  publish_range(topic, 0, n);
  ASSERT_TRUE(wait_for([&] { return reader.count() >= n; }, 30s)) << reader.count() << " " << b.last_error();
  const auto seqs = reader.seqs();
  ASSERT_EQ(seqs.size(), n);
  for (std::uint64_t i = 0; i < n; ++i) ASSERT_EQ(seqs[i], i) << "at " << i;
  EXPECT_EQ(reader.bad(), 0u);
}

// A bridge whose connection the server refuses: start gives up after the
// connect timeout, says why, and nothing is published.
void expect_refused(const std::string& url, const NatsOptions& auth, const TempDir& dir,
                    const std::vector<std::string>& any_of) {
  Hosts h;
  auto c = host_config("hostA", {url}, dir.path());
  copy_credentials(c.nats, auth);
  c.nats.connect_timeout = 1500ms;
  c.mappings.push_back(mapping(h.a("prices"), h.subject("prices"), BridgeDirection::outbound, BridgeMode::core));
  Bridge b(c);
  b.start();
  ASSERT_TRUE(wait_for([&] { return b.failed(); }, 20s)) << "the bridge neither connected nor gave up";
  EXPECT_FALSE(b.ready());
  const std::string e = lower(b.last_error());
  bool named = false;
  for (const auto& word : any_of) named = named || e.find(word) != std::string::npos;
  EXPECT_TRUE(named) << "the error does not say why: " << b.last_error();
  EXPECT_EQ(b.stats(0).forwarded, 0u);
}

TEST(BridgeAuth, UserAndPasswordAreSentAndAWrongPasswordIsRefusedWithAClearError) {
  TempDir dir;
  NatsServer server(dir.path(), "auth", {"--user", "alice", "--pass", "s3cret-pw"});
  NatsOptions good;
  good.user = "alice";
  good.password = "s3cret-pw";
  expect_flow(server.url(), good, good, dir);
  NatsOptions bad = good;
  bad.password = "wrong";
  expect_refused(server.url(), bad, dir, {"authorization", "authentication"});
  expect_refused(server.url(), NatsOptions{}, dir, {"authorization", "authentication"});
}

TEST(BridgeAuth, ATokenIsSentAndAWrongTokenIsRefusedWithAClearError) {
  TempDir dir;
  NatsServer server(dir.path(), "token", {"--auth", "t0ken-abc"});
  NatsOptions good;
  good.token = "t0ken-abc";
  expect_flow(server.url(), good, good, dir);
  NatsOptions bad;
  bad.token = "other";
  expect_refused(server.url(), bad, dir, {"authorization", "authentication"});
}

// A private CA, a server certificate for 127.0.0.1 and a client certificate,
// made with the openssl command (EC keys: fast).
struct Pki {
  std::string ca, server_cert, server_key, client_cert, client_key;
  bool ok = false;
  explicit Pki(const std::string& d) {
    ca = d + "/ca.pem";
    server_cert = d + "/server.pem";
    server_key = d + "/server-key.pem";
    client_cert = d + "/client.pem";
    client_key = d + "/client-key.pem";
    std::ofstream(d + "/san.ext") << "subjectAltName=IP:127.0.0.1,DNS:localhost\n";
    const std::string q = " >>" + d + "/openssl.log 2>&1";
    const std::string key = "openssl ecparam -name prime256v1 -genkey -noout -out ";
    const std::string cmds[] = {
        key + d + "/ca-key.pem",
        "openssl req -x509 -new -key " + d + "/ca-key.pem -subj /CN=zipc-test-ca -days 2 -out " + ca,
        key + server_key,
        "openssl req -new -key " + server_key + " -subj /CN=127.0.0.1 -out " + d + "/server.csr",
        "openssl x509 -req -in " + d + "/server.csr -CA " + ca + " -CAkey " + d +
            "/ca-key.pem -CAcreateserial -days 2 -extfile " + d + "/san.ext -out " + server_cert,
        key + client_key,
        "openssl req -new -key " + client_key + " -subj /CN=zipc-bridge -out " + d + "/client.csr",
        "openssl x509 -req -in " + d + "/client.csr -CA " + ca + " -CAkey " + d +
            "/ca-key.pem -CAcreateserial -days 2 -out " + client_cert,
    };
    for (const auto& c : cmds)
      if (std::system((c + q).c_str()) != 0) return;
    ok = true;
  }
};

TEST(BridgeAuth, TlsWithAPrivateCaCarriesMessagesAndAnUntrustedServerIsRefused) {
  TempDir dir;
  Pki pki(dir.path());
  if (!pki.ok)
    GTEST_SKIP() << "openssl could not make the test certificates: " << read_file(dir.path() + "/openssl.log");
  NatsServer server(dir.path(), "tls", {"--tls", "--tlscert", pki.server_cert, "--tlskey", pki.server_key});
  NatsOptions good;
  good.tls_ca = pki.ca;
  expect_flow(server.url(), good, good, dir);
  // The system trust store does not know the private CA.
  NatsOptions untrusted;
  untrusted.tls = true;
  expect_refused(server.url(), untrusted, dir, {"ssl", "tls", "certificate", "verify"});
  // Plain text to a TLS-only server.
  expect_refused(server.url(), NatsOptions{}, dir, {"tls", "ssl", "secure"});
}

TEST(BridgeAuth, MutualTlsNeedsTheClientCertificate) {
  TempDir dir;
  Pki pki(dir.path());
  if (!pki.ok)
    GTEST_SKIP() << "openssl could not make the test certificates: " << read_file(dir.path() + "/openssl.log");
  NatsServer server(dir.path(), "mtls",
                    {"--tlsverify", "--tlscert", pki.server_cert, "--tlskey", pki.server_key, "--tlscacert", pki.ca});
  NatsOptions good;
  good.tls_ca = pki.ca;
  good.tls_cert = pki.client_cert;
  good.tls_key = pki.client_key;
  expect_flow(server.url(), good, good, dir);
  NatsOptions no_cert;
  no_cert.tls_ca = pki.ca;
  expect_refused(server.url(), no_cert, dir, {"client certificate"});
}

// A decentralized-auth server (an operator's JWT trusted, the account
// preloaded) and a .creds file as `nsc generate creds` writes it: the user
// JWT and its nkey seed, with which the client signs the server's nonce.
TEST(BridgeAuth, ACredsFileOfAUserTheOperatorTrustsCarriesMessagesAndAStrangersIsRefused) {
  TempDir dir;
  std::optional<NatsIdentities> ids;
  try {
    ids.emplace(dir.path());
  } catch (const std::exception& e) {
    GTEST_SKIP() << "openssl could not make the test identities: " << e.what();
  }
  NatsServer server(dir.path(), "creds", {"-c", ids->server_conf});
  NatsOptions user;
  user.creds_file = ids->user_creds;
  expect_flow(server.url(), user, user, dir);
  NatsOptions stranger;
  stranger.creds_file = ids->stranger_creds;
  expect_refused(server.url(), stranger, dir, {"authorization", "authentication"});
  // And without credentials: the server does check them.
  expect_refused(server.url(), NatsOptions{}, dir, {"authorization", "authentication"});
}

TEST(BridgeAuth, AMissingCredsFileIsRefusedNamingTheOption) {
  TempDir dir;
  NatsServer server(dir.path(), "creds");
  Hosts h;
  auto c = host_config("hostA", {server.url()}, dir.path());
  c.nats.creds_file = dir.path() + "/no-such.creds";
  c.nats.connect_timeout = 1500ms;
  c.mappings.push_back(mapping(h.a("prices"), h.subject("prices"), BridgeDirection::outbound, BridgeMode::core));
  Bridge b(c);
  b.start();
  ASSERT_TRUE(wait_for([&] { return b.failed(); }, 20s)) << "the bridge neither connected nor gave up";
  EXPECT_NE(b.last_error().find("creds_file"), std::string::npos) << b.last_error();
  EXPECT_NE(b.last_error().find("no-such.creds"), std::string::npos) << b.last_error();
}

}  // namespace
}  // namespace auth_test

}  // namespace zipc::bridge_test
