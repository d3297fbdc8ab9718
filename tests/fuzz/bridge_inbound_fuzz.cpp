// Feeds arbitrary bytes to the NATS bridge's inbound parser as one message:
// a NATS header block ("NATS/1.0[ status]\r\nName: value\r\n...\r\n\r\n")
// then the body, through the same functions the receiving bridge uses
// (bridge/src/wire.hpp: check_message, then for_each_frame over what it
// accepted). It must never crash or read outside the body. The first byte
// says whether batches are allowed (core) or not (JetStream).
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <memory>
#include <string>
#include <string_view>

#include "wire.hpp"

namespace {

using zipc::bridge_detail::RawHeaders;

// Header values are views into `block` (kept alive by the caller).
void parse_block(std::string_view block, RawHeaders& r) {
  std::size_t eol = block.find("\r\n");
  std::string_view line = block.substr(0, eol);
  if (line.substr(0, 9) == "NATS/1.0 ") r.status = line.substr(9, 3);
  while (eol != std::string_view::npos) {
    block.remove_prefix(eol + 2);
    eol = block.find("\r\n");
    line = block.substr(0, eol);
    const std::size_t colon = line.find(':');
    if (colon == std::string_view::npos) continue;
    const std::string_view name = line.substr(0, colon);
    std::string_view value = line.substr(colon + 1);
    while (!value.empty() && value.front() == ' ') value.remove_prefix(1);
    std::optional<std::string_view>* slot = name == "Zipc-Origin"    ? &r.origin
                                            : name == "Zipc-Channel" ? &r.channel
                                            : name == "Zipc-Seq"     ? &r.seq
                                            : name == "Zipc-Time"    ? &r.time
                                            : name == "Zipc-Skip"    ? &r.skip
                                            : name == "Zipc-Count"   ? &r.count
                                            : name == "Zipc-Auth"    ? &r.auth
                                                                     : nullptr;
    if (slot != nullptr && !*slot) *slot = value;
  }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  if (size == 0) return 0;
  const bool batches = (data[0] & 1) != 0;
  const std::string_view in(reinterpret_cast<const char*>(data + 1), size - 1);
  const std::size_t end = in.find("\r\n\r\n");
  const std::string block(end == std::string_view::npos ? std::string_view() : in.substr(0, end + 2));
  const std::string_view rest = end == std::string_view::npos ? in : in.substr(end + 4);
  // The body in an allocation of exactly its size: ASan sees any read past it.
  const std::size_t n = rest.size();
  const std::unique_ptr<char[]> body(new char[n == 0 ? 1 : n]);
  if (n != 0) std::memcpy(body.get(), rest.data(), n);
  RawHeaders raw;
  parse_block(block, raw);
  zipc::bridge_detail::Headers h;
  if (zipc::bridge_detail::check_message(raw, body.get(), n, batches, &h) != zipc::bridge_detail::Reject::none)
    return 0;
  if (!batches && h.count != 0) __builtin_trap();  // JetStream messages are never batched
  std::uint64_t frames = 0;
  volatile unsigned char sink = 0;
  zipc::bridge_detail::for_each_frame(
      h, body.get(), n, 0, [&](std::uint64_t, const zipc::bridge_detail::Headers& fh, const char* p, std::size_t len) {
        if (fh.has_seq && fh.seq > zipc::bridge_detail::kMaxSeq) __builtin_trap();
        for (std::size_t i = 0; i < len; ++i) sink = sink + static_cast<unsigned char>(p[i]);
        ++frames;
        return true;
      });
  // An accepted batch holds every frame it claims.
  if (h.count != 0 && frames != h.count) __builtin_trap();
  return 0;
}
