// How messages are printed (sub, call, replay) and parsed (pub --format json).
#pragma once

#include "common.hpp"

namespace zipc_tool {

enum class OutFormat { text, hex, json };
OutFormat parse_out_format(const std::string& s);

// text: the bytes and '\n'; hex: lowercase hex and '\n'; json: one object per
// line {"seq","time_ns","size", "data" (UTF-8 text) or "hex"}.
void emit_message(OutBuffer& out, OutFormat f, std::uint64_t seq, std::uint64_t time_ns,
                  std::span<const std::byte> data);

// A pub --format json line: a JSON string (its text), {"data": "..."},
// {"hex": "..."}; any other value is sent as its compact JSON text.
std::string json_line_payload(std::string_view line);

}  // namespace zipc_tool
