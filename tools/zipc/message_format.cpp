// Printing and parsing messages (message_format.hpp).
#include "message_format.hpp"

namespace zipc_tool {

OutFormat parse_out_format(const std::string& s) {
  if (s == "text") return OutFormat::text;
  if (s == "hex") return OutFormat::hex;
  if (s == "json") return OutFormat::json;
  fail(kUsage, "--format", "'" + s + "' is not text, hex or json");
}

void emit_message(OutBuffer& out, OutFormat f, std::uint64_t seq, std::uint64_t time_ns,
                  std::span<const std::byte> data) {
  switch (f) {
    case OutFormat::text:
      out.append(data.data(), data.size());
      out.put('\n');
      return;
    case OutFormat::hex:
      out.append(hex(data));
      out.put('\n');
      return;
    case OutFormat::json: {
      nlohmann::ordered_json j;
      j["seq"] = seq;
      j["time_ns"] = time_ns;
      j["size"] = data.size();
      if (is_utf8_text(data)) {
        j["data"] = std::string(reinterpret_cast<const char*>(data.data()), data.size());
      } else {
        j["hex"] = hex(data);
      }
      out.append(j.dump());
      out.put('\n');
      return;
    }
  }
}

namespace {
int nibble(char c) {
  if (c >= '0' && c <= '9') return c - '0';
  if (c >= 'a' && c <= 'f') return c - 'a' + 10;
  if (c >= 'A' && c <= 'F') return c - 'A' + 10;
  return -1;
}
}  // namespace

std::string json_line_payload(std::string_view line) {
  nlohmann::json j;
  try {
    j = nlohmann::json::parse(line);
  } catch (const nlohmann::json::exception& e) {
    fail(kUsage, "stdin", std::string("not a JSON line: ") + e.what());
  }
  if (j.is_string()) return j.get<std::string>();
  if (j.is_object() && j.contains("data") && j["data"].is_string()) return j["data"].get<std::string>();
  if (j.is_object() && j.contains("hex") && j["hex"].is_string()) {
    const std::string h = j["hex"].get<std::string>();
    if (h.size() % 2 != 0) fail(kUsage, "stdin", "\"hex\" has an odd number of digits");
    std::string out(h.size() / 2, '\0');
    for (std::size_t i = 0; i < out.size(); ++i) {
      const int hi = nibble(h[2 * i]), lo = nibble(h[2 * i + 1]);
      if (hi < 0 || lo < 0) fail(kUsage, "stdin", "\"hex\" holds a non-hex digit");
      out[i] = static_cast<char>(hi * 16 + lo);
    }
    return out;
  }
  return j.dump();
}

}  // namespace zipc_tool
