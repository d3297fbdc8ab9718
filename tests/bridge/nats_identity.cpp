#include "nats_identity.hpp"

#include <cstdint>
#include <cstdlib>
#include <ctime>
#include <fstream>
#include <stdexcept>
#include <string_view>
#include <vector>

#include "nats_server.hpp"

namespace zipc::bridge_test {
namespace {

using Bytes = std::vector<std::uint8_t>;

// The nkeys prefix bytes (nats-io/nkeys): the key's role in the first 5 bits.
std::uint8_t role_byte(char prefix) {
  switch (prefix) {
    case 'O': return 14 << 3;
    case 'A': return 0;
    case 'U': return 20 << 3;
    default: throw std::invalid_argument(std::string("no nkey role '") + prefix + "'");
  }
}
constexpr std::uint8_t kSeedByte = 18 << 3;

// CRC-16/XMODEM (polynomial 0x1021, initial 0), as nkeys checks its keys.
std::uint16_t crc16(const Bytes& b) {
  std::uint16_t crc = 0;
  for (std::uint8_t byte : b) {
    crc = static_cast<std::uint16_t>(crc ^ (byte << 8));
    for (int i = 0; i < 8; ++i) crc = static_cast<std::uint16_t>((crc & 0x8000) != 0 ? (crc << 1) ^ 0x1021 : crc << 1);
  }
  return crc;
}

// RFC 4648 encoding without padding: `width` bits a character (5: base32,
// 6: base64), the last group zero-filled.
std::string rfc4648(std::string_view bytes, int width, const char* alphabet) {
  const std::uint32_t mask = (1u << width) - 1;
  std::string out;
  std::uint32_t buffer = 0;
  int bits = 0;
  for (char c : bytes) {
    buffer = (buffer << 8) | static_cast<std::uint8_t>(c);
    bits += 8;
    while (bits >= width) {
      out += alphabet[(buffer >> (bits - width)) & mask];
      bits -= width;
    }
  }
  if (bits > 0) out += alphabet[(buffer << (width - bits)) & mask];
  return out;
}

std::string base32(const Bytes& b) {
  return rfc4648({reinterpret_cast<const char*>(b.data()), b.size()}, 5, "ABCDEFGHIJKLMNOPQRSTUVWXYZ234567");
}

std::string base64url(std::string_view s) {  // (JWT)
  return rfc4648(s, 6, "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_");
}

std::string with_crc(Bytes raw) {
  const std::uint16_t crc = crc16(raw);
  raw.push_back(static_cast<std::uint8_t>(crc & 0xff));
  raw.push_back(static_cast<std::uint8_t>(crc >> 8));
  return base32(raw);
}

void run(const std::string& dir, const std::string& command) {
  const std::string log = dir + "/openssl.log";
  if (std::system((command + " >>" + log + " 2>&1").c_str()) != 0)
    throw std::runtime_error("'" + command + "' failed: " + read_file(log));
}

// The last n bytes of a file (the raw key at the end of openssl's DER).
Bytes tail_bytes(const std::string& path, std::size_t n) {
  const std::string all = read_file(path);
  if (all.size() < n) throw std::runtime_error(path + ": shorter than " + std::to_string(n) + " bytes");
  return {all.end() - static_cast<std::ptrdiff_t>(n), all.end()};
}

std::string creds_text(const std::string& jwt, const std::string& seed) {
  return "-----BEGIN NATS USER JWT-----\n" + jwt +
         "\n------END NATS USER JWT------\n\n"
         "************************* IMPORTANT *************************\n"
         "NKEY Seed printed below can be used to sign and prove identity.\n\n"
         "-----BEGIN USER NKEY SEED-----\n" +
         seed + "\n------END USER NKEY SEED------\n";
}

}  // namespace

NKey make_nkey(const std::string& dir, const std::string& name, char prefix) {
  NKey k;
  k.pem = dir + "/" + name + ".pem";
  run(dir, "openssl genpkey -algorithm ed25519 -out " + k.pem);
  run(dir, "openssl pkey -in " + k.pem + " -outform DER -out " + k.pem + ".der");
  run(dir, "openssl pkey -in " + k.pem + " -pubout -outform DER -out " + k.pem + ".pub.der");
  const std::uint8_t role = role_byte(prefix);
  Bytes pub{role};
  for (std::uint8_t b : tail_bytes(k.pem + ".pub.der", 32)) pub.push_back(b);
  k.public_key = with_crc(pub);
  Bytes seed{static_cast<std::uint8_t>(kSeedByte | (role >> 5)), static_cast<std::uint8_t>((role & 31) << 3)};
  for (std::uint8_t b : tail_bytes(k.pem + ".der", 32)) seed.push_back(b);
  k.seed = with_crc(seed);
  return k;
}

std::string make_jwt(const std::string& dir, const NKey& issuer, const NKey& subject, const std::string& kind,
                     const std::string& name) {
  std::string nats;
  if (kind == "operator") {
    nats = R"({"type":"operator","version":2})";
  } else if (kind == "account") {
    nats = R"({"limits":{"subs":-1,"data":-1,"payload":-1,"imports":-1,"exports":-1,"wildcards":true,"conn":-1,)"
           R"("leaf":-1},"default_permissions":{"pub":{},"sub":{}},"type":"account","version":2})";
  } else {
    nats = R"({"pub":{},"sub":{},"subs":-1,"data":-1,"payload":-1,"type":"user","version":2})";
  }
  const std::string claims = R"({"jti":")" + subject.public_key.substr(1, 20) + R"(","iat":)" +
                             std::to_string(std::time(nullptr)) + R"(,"iss":")" + issuer.public_key + R"(","name":")" +
                             name + R"(","sub":")" + subject.public_key + R"(","nats":)" + nats + "}";
  const std::string signing_input = base64url(R"({"typ":"JWT","alg":"ed25519-nkey"})") + "." + base64url(claims);
  const std::string in = dir + "/" + name + ".jwt-input", sig = dir + "/" + name + ".jwt-sig";
  std::ofstream(in, std::ios::binary) << signing_input;
  run(dir, "openssl pkeyutl -sign -inkey " + issuer.pem + " -rawin -in " + in + " -out " + sig);
  return signing_input + "." + base64url(read_file(sig));
}

NatsIdentities::NatsIdentities(const std::string& dir) {
  const NKey op = make_nkey(dir, "operator", 'O');
  const NKey system = make_nkey(dir, "system", 'A');  // the server's own (JetStream needs one)
  const NKey account = make_nkey(dir, "account", 'A');
  const NKey user = make_nkey(dir, "user", 'U');
  const NKey other_account = make_nkey(dir, "other-account", 'A');
  const NKey stranger = make_nkey(dir, "stranger", 'U');
  server_conf = dir + "/server.conf";
  std::ofstream(server_conf) << "operator: " << make_jwt(dir, op, op, "operator", "zipc-test-operator") << "\n"
                             << "system_account: " << system.public_key << "\n"
                             << "resolver: MEMORY\n"
                             << "resolver_preload: {\n  " << system.public_key << ": "
                             << make_jwt(dir, op, system, "account", "SYS") << "\n  " << account.public_key << ": "
                             << make_jwt(dir, op, account, "account", "zipc-test-account") << "\n}\n";
  user_creds = dir + "/user.creds";
  std::ofstream(user_creds) << creds_text(make_jwt(dir, account, user, "user", "zipc-bridge"), user.seed);
  // Signed by an account the server was never given.
  stranger_creds = dir + "/stranger.creds";
  std::ofstream(stranger_creds) << creds_text(make_jwt(dir, other_account, stranger, "user", "stranger"),
                                              stranger.seed);
}

}  // namespace zipc::bridge_test
