// The envelope a receiving bridge puts before each local message when asked.
#include <cstring>

#include "internal.hpp"

namespace zipc {
namespace {
template <class T>
T load(const std::byte* p) {
  T v;
  std::memcpy(&v, p, sizeof(T));
  return v;
}
constexpr std::size_t kFixed = 24;  // magic, total, lengths, sequence, origin_ns
}  // namespace

std::optional<BridgeEnvelope> parse_envelope(std::span<const std::byte> message) noexcept {
  if (message.size() < kFixed || load<std::uint32_t>(message.data()) != kEnvelopeMagic) return std::nullopt;
  const auto total = load<std::uint16_t>(message.data() + 4);
  const auto olen = static_cast<std::size_t>(message[6]);
  const auto clen = static_cast<std::size_t>(message[7]);
  if (total % 8 != 0 || total < kFixed + olen + clen || total > message.size()) return std::nullopt;
  BridgeEnvelope e;
  e.sequence = load<std::uint64_t>(message.data() + 8);
  e.origin_ns = load<std::uint64_t>(message.data() + 16);
  e.origin = {reinterpret_cast<const char*>(message.data() + kFixed), olen};
  e.channel = {reinterpret_cast<const char*>(message.data() + kFixed + olen), clen};
  e.payload = message.subspan(total);
  return e;
}

namespace bridge_detail {
std::size_t build_envelope(std::string& out, std::string_view origin, std::string_view channel, std::uint64_t seq,
                           std::uint64_t origin_ns) {
  origin = origin.substr(0, 255);
  channel = channel.substr(0, 255);
  const std::size_t total = (kFixed + origin.size() + channel.size() + 7) / 8 * 8;
  out.assign(total, '\0');
  const std::uint32_t magic = kEnvelopeMagic;
  const auto t16 = static_cast<std::uint16_t>(total);
  std::memcpy(out.data(), &magic, 4);
  std::memcpy(out.data() + 4, &t16, 2);
  out[6] = static_cast<char>(origin.size());
  out[7] = static_cast<char>(channel.size());
  std::memcpy(out.data() + 8, &seq, 8);
  std::memcpy(out.data() + 16, &origin_ns, 8);
  // (A plain message has neither: empty views may hold a null pointer.)
  if (!origin.empty()) std::memcpy(out.data() + kFixed, origin.data(), origin.size());
  if (!channel.empty()) std::memcpy(out.data() + kFixed + origin.size(), channel.data(), channel.size());
  return total;
}
}  // namespace bridge_detail
}  // namespace zipc
