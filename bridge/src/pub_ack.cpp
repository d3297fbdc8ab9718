// The strict reading of a JetStream publish acknowledgement (pub_ack.hpp).
#include "pub_ack.hpp"

#include <nlohmann/json.hpp>

#include "wire.hpp"

namespace zipc::bridge_detail {
namespace {

PubAck malformed(const char* problem) noexcept {
  PubAck a;
  a.problem = problem;
  return a;
}

// An untrusted text for a report: at most 120 bytes, printable ASCII.
std::string printable(std::string_view s) {
  std::string out(s.substr(0, 120));
  for (char& c : out)
    if (c < 0x20 || c > 0x7e) c = '?';
  return out;
}

// The forms nats-server writes, {"stream":"<stream>", "seq":N} (2.9 puts a
// blank after the comma; a "domain":"<d>" member may come between) and the
// same with ,"duplicate": true before the brace: read without building a JSON
// tree. Anything else (other orders, escapes, other members) goes to the full
// parser.
class Exact {
 public:
  explicit Exact(std::string_view s) : s_(s) {}
  bool lit(std::string_view t) {
    blanks();
    if (s_.substr(0, t.size()) != t) return false;
    s_.remove_prefix(t.size());
    return true;
  }
  // A string without escapes, its quotes taken.
  bool plain_string(std::string_view* out) {
    if (!lit("\"")) return false;
    const std::size_t end = s_.find_first_of("\"\\");
    if (end == std::string_view::npos || s_[end] != '"') return false;
    *out = s_.substr(0, end);
    s_.remove_prefix(end + 1);
    return true;
  }
  std::optional<std::uint64_t> number() {
    blanks();
    std::size_t digits = 0;
    while (digits < s_.size() && s_[digits] >= '0' && s_[digits] <= '9') ++digits;
    const auto v = parse_decimal(s_.substr(0, digits));
    s_.remove_prefix(digits);
    return v;
  }
  [[nodiscard]] bool at_end() const { return s_.empty(); }

 private:
  void blanks() {
    while (!s_.empty() && s_.front() == ' ') s_.remove_prefix(1);
  }
  std::string_view s_;
};

std::optional<PubAck> exact(std::string_view body, std::string_view stream) {
  Exact e(body);
  std::string_view name, domain;
  if (!e.lit("{\"stream\":") || !e.plain_string(&name) || name != stream || !e.lit(",")) return std::nullopt;
  if (e.lit("\"domain\":") && (!e.plain_string(&domain) || !e.lit(","))) return std::nullopt;
  if (!e.lit("\"seq\":")) return std::nullopt;
  const auto seq = e.number();
  if (!seq || *seq == 0 || *seq > kMaxSeq) return std::nullopt;
  PubAck a;
  a.stream_seq = *seq;
  if (e.lit(",")) {
    if (!e.lit("\"duplicate\":") || !e.lit("true")) return std::nullopt;
    a.kind = PubAck::Kind::duplicate;
  } else {
    a.kind = PubAck::Kind::stored;
  }
  if (!e.lit("}") || !e.at_end()) return std::nullopt;
  return a;
}

PubAck parsed(std::string_view body, std::string_view stream) {
  using nlohmann::json;
  const json j = json::parse(body.begin(), body.end(), nullptr, /*allow_exceptions=*/false);
  if (!j.is_object()) return malformed("not a JSON object");
  if (const auto e = j.find("error"); e != j.end()) {
    if (!e->is_object()) return malformed("an error that is not an object");
    PubAck a;
    a.kind = PubAck::Kind::error;
    const auto d = e->find("description");
    a.description = d != e->end() && d->is_string() ? printable(d->get_ref<const std::string&>()) : "no description";
    return a;
  }
  const auto s = j.find("stream");
  if (s == j.end() || !s->is_string()) return malformed("no stream name");
  if (s->get_ref<const std::string&>() != stream) return malformed("for another stream");
  const auto q = j.find("seq");
  if (q == j.end() || !q->is_number_unsigned()) return malformed("no sequence");
  const auto seq = q->get<std::uint64_t>();
  if (seq == 0 || seq > kMaxSeq) return malformed("a sequence out of range");
  const auto d = j.find("duplicate");
  if (d != j.end() && !d->is_boolean()) return malformed("a duplicate flag that is not a boolean");
  PubAck a;
  a.kind = d != j.end() && d->get<bool>() ? PubAck::Kind::duplicate : PubAck::Kind::stored;
  a.stream_seq = seq;
  return a;
}

}  // namespace

PubAck parse_pub_ack(std::string_view body, std::string_view stream) noexcept {
  if (body.empty()) return malformed("empty");
  if (body.size() > kMaxPubAckBytes) return malformed("too long");
  if (auto a = exact(body, stream)) return std::move(*a);
  try {
    return parsed(body, stream);
  } catch (...) {  // (no memory: parse() itself reports errors without throwing)
    return malformed("unreadable");
  }
}

std::optional<std::uint64_t> reply_token(std::string_view subject, std::string_view prefix) noexcept {
  if (subject.size() != prefix.size() + kReplyTokenDigits || subject.substr(0, prefix.size()) != prefix)
    return std::nullopt;
  const auto v = parse_decimal(subject.substr(prefix.size()));
  if (!v || *v > kMaxSeq) return std::nullopt;
  return v;
}

void write_reply_token(char* out, std::uint64_t v) noexcept {
  for (std::size_t i = kReplyTokenDigits; i-- > 0; v /= 10) out[i] = static_cast<char>('0' + v % 10);
}

}  // namespace zipc::bridge_detail
