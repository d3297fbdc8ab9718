// Per-mapping message authentication (BridgeMapping::auth_key_file): an
// HMAC-SHA-256, through OpenSSL's libcrypto, over the subject, the Zipc-*
// headers as sent and the payload, carried in the Zipc-Auth header as
// lower-case hex (docs/guide/bridge.md, "Authenticated origins").
#pragma once

#include <array>
#include <cstddef>
#include <memory>
#include <string>
#include <string_view>

namespace zipc::bridge_detail {

class Hmac {
 public:
  // Reads the key file (16 to 4096 bytes; a trailing newline is not part of
  // the key; not readable by group or others). Throws zipc::Error naming the
  // file and the cause.
  explicit Hmac(const std::string& key_file);
  ~Hmac();
  Hmac(const Hmac&) = delete;
  Hmac& operator=(const Hmac&) = delete;

  // The fields a message is authenticated over (the header values as they
  // are on the wire, empty when absent).
  struct Fields {
    std::string_view subject, origin, channel, seq, time, skip, count;
    const char* data = nullptr;
    std::size_t size = 0;
  };
  using Hex = std::array<char, 65>;  // 64 hex digits and a NUL
  // False only when libcrypto fails.
  bool sign(const Fields& f, Hex* out) noexcept;
  // Constant-time comparison with the header's value.
  bool verify(const Fields& f, std::string_view hex) noexcept;

 private:
  struct Ctx;
  std::unique_ptr<Ctx> ctx_;
};

}  // namespace zipc::bridge_detail
