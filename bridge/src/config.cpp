// The bridge's JSON config: parsing and validation (format in docs/guide/bridge.md).
#include <fstream>
#include <nlohmann/json.hpp>
#include <set>
#include <sstream>

#include "internal.hpp"
#include "zipc/bridge.hpp"
#include "zipc/error.hpp"
#include "zipc/segment.hpp"

namespace zipc {
namespace {

using nlohmann::json;

[[noreturn]] void bad(std::string_view origin, const std::string& what) {
  throw Error(Errc::invalid_argument, std::string(origin) + ": " + what);
}

void only_keys(std::string_view origin, const json& j, const std::string& where, const std::set<std::string>& keys) {
  if (!j.is_object()) bad(origin, where + " must be an object");
  for (const auto& [k, v] : j.items())
    if (keys.count(k) == 0) bad(origin, std::string("unknown key '").append(k).append("' in ").append(where));
}

template <class T>
void get(std::string_view origin, const json& j, const char* key, const std::string& where, T& out) {
  auto it = j.find(key);
  if (it == j.end()) return;
  try {
    out = it->get<T>();
  } catch (const json::exception&) {
    bad(origin, where + "." + key + " has the wrong type (" + it->type_name() + ")");
  }
}

template <class E>
E pick(std::string_view origin, const json& j, const char* key, const std::string& where, E def,
       std::initializer_list<std::pair<const char*, E>> names) {
  std::string v;
  get(origin, j, key, where, v);
  if (v.empty()) return def;
  std::string allowed;
  for (const auto& [n, e] : names) {
    if (v == n) return e;
    if (!allowed.empty()) allowed += ", ";
    allowed.append(n);
  }
  bad(origin, where + "." + key + " is '" + v + "'; expected one of: " + allowed);
}

bool has_wildcard(std::string_view subject) {
  std::size_t start = 0;
  while (start <= subject.size()) {
    std::size_t dot = subject.find('.', start);
    std::string_view tok = subject.substr(start, dot == std::string_view::npos ? std::string_view::npos : dot - start);
    if (tok == "*" || tok == ">") return true;
    if (dot == std::string_view::npos) break;
    start = dot + 1;
  }
  return false;
}

}  // namespace

BridgeConfig parse_bridge_config(std::string_view text, std::string_view origin) {
  json j;
  try {
    j = json::parse(text);
  } catch (const json::parse_error& e) {
    bad(origin, std::string("not valid JSON: ") + e.what());
  }
  only_keys(origin, j, "the top level", {"host_id", "state_dir", "threads", "nats", "mappings"});
  BridgeConfig c;
  get(origin, j, "host_id", "config", c.host_id);
  get(origin, j, "state_dir", "config", c.state_dir);
  c.threads = pick(origin, j, "threads", "config", BridgeThreads::own,
                   {{"own", BridgeThreads::own}, {"caller", BridgeThreads::caller}});
  if (auto n = j.find("nats"); n != j.end()) {
    only_keys(
        origin, *n, "nats",
        {"servers", "user", "password", "token", "creds_file", "tls", "tls_ca", "tls_cert", "tls_key", "randomize",
         "connect_timeout_ms", "reconnect_wait_ms", "reconnect_buffer_bytes", "pending_msgs", "pending_bytes"});
    auto& o = c.nats;
    get(origin, *n, "servers", "nats", o.servers);
    get(origin, *n, "user", "nats", o.user);
    get(origin, *n, "password", "nats", o.password);
    get(origin, *n, "token", "nats", o.token);
    get(origin, *n, "creds_file", "nats", o.creds_file);
    get(origin, *n, "tls", "nats", o.tls);
    get(origin, *n, "randomize", "nats", o.randomize);
    get(origin, *n, "tls_ca", "nats", o.tls_ca);
    get(origin, *n, "tls_cert", "nats", o.tls_cert);
    get(origin, *n, "tls_key", "nats", o.tls_key);
    std::int64_t ms = o.connect_timeout.count();
    get(origin, *n, "connect_timeout_ms", "nats", ms);
    o.connect_timeout = std::chrono::milliseconds(ms);
    ms = o.reconnect_wait.count();
    get(origin, *n, "reconnect_wait_ms", "nats", ms);
    o.reconnect_wait = std::chrono::milliseconds(ms);
    get(origin, *n, "reconnect_buffer_bytes", "nats", o.reconnect_buffer_bytes);
    get(origin, *n, "pending_msgs", "nats", o.pending_msgs);
    get(origin, *n, "pending_bytes", "nats", o.pending_bytes);
  }
  auto maps = j.find("mappings");
  if (maps == j.end() || !maps->is_array()) bad(origin, "'mappings' (an array) is required");
  for (std::size_t i = 0; i < maps->size(); ++i) {
    const json& mj = (*maps)[i];
    const std::string where = "mappings[" + std::to_string(i) + "]";
    only_keys(origin, mj, where,
              {"name",
               "kind",
               "channel",
               "subject",
               "direction",
               "mode",
               "overflow",
               "stream",
               "durable",
               "envelope",
               "batch",
               "batch_bytes",
               "wait",
               "create",
               "topic_capacity_bytes",
               "max_message_size",
               "queue_block_size",
               "queue_block_count",
               "seq_window",
               "max_origins",
               "reorder_wait_ms",
               "auth_key_file"});
    BridgeMapping m;
    get(origin, mj, "name", where, m.name);
    m.kind = pick(origin, mj, "kind", where, BridgeKind::topic,
                  {{"topic", BridgeKind::topic}, {"queue", BridgeKind::queue}});
    get(origin, mj, "channel", where, m.channel);
    get(origin, mj, "subject", where, m.subject);
    m.direction =
        pick(origin, mj, "direction", where, BridgeDirection::outbound,
             {{"out", BridgeDirection::outbound}, {"in", BridgeDirection::inbound}, {"both", BridgeDirection::both}});
    m.mode = pick(origin, mj, "mode", where, BridgeMode::core,
                  {{"core", BridgeMode::core}, {"jetstream", BridgeMode::jetstream}});
    m.overflow = pick(origin, mj, "overflow", where, BridgeOverflow::block,
                      {{"block", BridgeOverflow::block}, {"drop", BridgeOverflow::drop}});
    get(origin, mj, "stream", where, m.stream);
    get(origin, mj, "durable", where, m.durable);
    get(origin, mj, "envelope", where, m.envelope);
    get(origin, mj, "batch", where, m.batch);
    get(origin, mj, "batch_bytes", where, m.batch_bytes);
    // Unset: BridgeMapping's own default.
    m.wait.strategy =
        pick(origin, mj, "wait", where, m.wait.strategy,
             {{"adaptive", WaitStrategy::adaptive}, {"busy", WaitStrategy::busy_poll}, {"block", WaitStrategy::block}});
    get(origin, mj, "create", where, m.create);
    get(origin, mj, "topic_capacity_bytes", where, m.topic_capacity_bytes);
    get(origin, mj, "max_message_size", where, m.max_message_size);
    get(origin, mj, "queue_block_size", where, m.queue_block_size);
    get(origin, mj, "queue_block_count", where, m.queue_block_count);
    get(origin, mj, "seq_window", where, m.seq_window);
    get(origin, mj, "max_origins", where, m.max_origins);
    std::int64_t wait_ms = m.reorder_wait.count();
    get(origin, mj, "reorder_wait_ms", where, wait_ms);
    m.reorder_wait = std::chrono::milliseconds(wait_ms);
    get(origin, mj, "auth_key_file", where, m.auth_key_file);
    c.mappings.push_back(std::move(m));
  }
  try {
    validate(c);
  } catch (const Error& e) {
    bad(origin, e.what());
  }
  return c;
}

BridgeConfig load_bridge_config(const std::string& path) {
  std::ifstream in(path);
  if (!in) throw Error(Errc::not_found, "bridge config '" + path + "': cannot be read");
  std::stringstream ss;
  ss << in.rdbuf();
  return parse_bridge_config(ss.str(), "bridge config '" + path + "'");
}

void validate(const BridgeConfig& c) {
  auto fail = [](const std::string& what) { throw Error(Errc::invalid_argument, what); };
  if (c.nats.servers.empty()) fail("nats.servers is empty");
  for (const auto& s : c.nats.servers)
    if (s.empty() || s.find(' ') != std::string::npos) fail("nats.servers has an empty or blank URL '" + s + "'");
  if (!c.nats.tls_key.empty() && c.nats.tls_cert.empty()) fail("nats.tls_key is set without nats.tls_cert");
  if (c.nats.pending_msgs <= 0 || c.nats.pending_bytes <= 0) fail("nats.pending_msgs/pending_bytes must be > 0");
  if (c.nats.connect_timeout.count() < 0 || c.nats.reconnect_wait.count() < 0)
    fail("nats.connect_timeout_ms/reconnect_wait_ms must be >= 0 (they are " +
         std::to_string(c.nats.connect_timeout.count()) + " and " + std::to_string(c.nats.reconnect_wait.count()) +
         ")");
  if (c.host_id.find_first_of(" \t\r\n/") != std::string::npos) fail("host_id '" + c.host_id + "' has a blank or '/'");
  if (c.mappings.empty()) fail("no mappings");
  std::set<std::string> names;
  for (std::size_t i = 0; i < c.mappings.size(); ++i) {
    const auto& m = c.mappings[i];
    const std::string where = "mapping " + std::to_string(i) + " ('" + (m.name.empty() ? m.channel : m.name) + "')";
    if (m.channel.empty()) fail(where + ": channel is empty");
    try {
      Segment::validate_name(m.channel);
    } catch (const Error& e) {
      fail(where + ": channel: " + e.what());
    }
    if (m.subject.empty() || m.subject.find_first_of(" \t\r\n") != std::string::npos)
      fail(where + ": subject '" + m.subject + "' is empty or has blanks");
    if (m.direction != BridgeDirection::inbound && has_wildcard(m.subject))
      fail(where + ": subject '" + m.subject + "' has a wildcard; only inbound mappings may use one");
    if (m.batch_bytes < bridge_detail::kMinBatchBytes || m.batch_bytes > bridge_detail::kMaxBatchBytes)
      fail(where + ": batch_bytes " + std::to_string(m.batch_bytes) + " is outside " +
           std::to_string(bridge_detail::kMinBatchBytes) + ".." + std::to_string(bridge_detail::kMaxBatchBytes));
    if (m.seq_window < 1 || m.seq_window > (std::uint64_t{1} << 40))
      fail(where + ": seq_window " + std::to_string(m.seq_window) + " is outside 1.." +
           std::to_string(std::uint64_t{1} << 40));
    if (m.max_origins < 1 || m.max_origins > (std::size_t{1} << 20))
      fail(where + ": max_origins " + std::to_string(m.max_origins) + " is outside 1.." +
           std::to_string(std::size_t{1} << 20));
    if (m.reorder_wait.count() < 1 || m.reorder_wait.count() > 3'600'000)
      fail(where + ": reorder_wait_ms " + std::to_string(m.reorder_wait.count()) + " is outside 1..3600000");
    if (m.kind == BridgeKind::queue && m.direction == BridgeDirection::both)
      fail(where + ": a queue mapping is outbound or inbound, not both (the bridge would consume its own input)");
    if (c.threads == BridgeThreads::caller && (m.mode != BridgeMode::core || m.direction == BridgeDirection::both))
      fail(where + ": threads 'caller' drives core mappings, outbound or inbound (this one is " +
           (m.mode != BridgeMode::core ? std::string("jetstream") : std::string("both ways")) + "); use threads 'own'");
    if (m.mode == BridgeMode::jetstream) {
      if (m.stream.empty()) fail(where + ": mode jetstream needs a stream name");
      if (c.state_dir.empty()) fail(where + ": mode jetstream needs state_dir (the bridge's positions)");
      if (m.stream.find_first_of(" .*>") != std::string::npos) fail(where + ": stream '" + m.stream + "' has ' .*>'");
    }
    if (!names.insert(m.name.empty() ? m.channel + "/" + m.subject : m.name).second)
      fail(where + ": the same name twice");
  }
}

}  // namespace zipc
