/// \file
/// zipc/bridge.hpp - carry topics and queues across hosts through NATS.
///
/// \code
///   zipc::BridgeConfig cfg;
///   cfg.nats.servers = {"nats://10.0.0.5:4222", "nats://10.0.0.6:4222"};
///   cfg.host_id = "hostA";
///   cfg.state_dir = "/var/lib/zipc-bridge";  // positions survive a restart
///   zipc::BridgeMapping m;
///   m.channel = "prices";                    // a local topic
///   m.subject = "zipc.prices";
///   m.direction = zipc::BridgeDirection::outbound;
///   m.mode = zipc::BridgeMode::jetstream;
///   m.stream = "ZIPC_PRICES";
///   cfg.mappings.push_back(m);
///   zipc::Bridge bridge(cfg);  // validates; throws zipc::Error(invalid_argument) naming the field
///   bridge.start();            // connects in the background (retrying with back-off)
///   // ... the application runs; the bridge forwards in the background ...
///   zipc::BridgeStats st = bridge.stats(0);  // forwarded, received, lost, duplicates, reconnects
///   bridge.stop();
/// \endcode
///
/// Every message the bridge sends carries NATS headers Zipc-Origin (host id),
/// Zipc-Channel, Zipc-Seq and Zipc-Time (CLOCK_REALTIME ns at the origin). With
/// BridgeMapping::envelope the receiving bridge prefixes each local message with
/// those headers (parse_envelope() reads them back). docs/guide/bridge.md has the
/// config format and the guarantees of each mode.
#pragma once

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "zipc/event.hpp"

namespace zipc {

/// What a mapping's local channel is.
enum class BridgeKind : std::uint8_t {
  topic,  ///< a zipc::Topic
  queue,  ///< a zipc::Queue
};
/// Which way a mapping moves messages.
enum class BridgeDirection : std::uint8_t {
  outbound,  ///< local channel -> NATS subject
  inbound,   ///< NATS subject -> local channel
  both,      ///< both ways (an origin never receives its own messages back)
};
/// How a mapping uses NATS.
enum class BridgeMode : std::uint8_t {
  core,       ///< lowest latency; losses counted exactly from sequence gaps
  jetstream,  ///< at least once on the wire, exactly once at the receiving channel
};
/// What happens when the next hop has no room (NATS buffers full outbound,
/// the local channel full inbound).
enum class BridgeOverflow : std::uint8_t {
  block,  ///< back-pressure: wait (the local publisher is held back by the bridge's reliable read)
  drop,   ///< drop and count the message in `lost`
};

/// NATS connection options, passed through to the C client.
struct NatsOptions {
  std::vector<std::string> servers{"nats://127.0.0.1:4222"};  ///< a cluster: several URLs
  std::string user;                                           ///< user name (with password)
  std::string password;                                       ///< password (with user)
  std::string token;                                          ///< authentication token
  std::string creds_file;                                     ///< a .creds file (JWT + NKey seed)
  std::string tls_ca;                             ///< CA certificate, PEM file; any of the three turns TLS on
  std::string tls_cert;                           ///< client certificate, PEM file
  std::string tls_key;                            ///< client key, PEM file
  bool tls = false;                               ///< TLS with the system's trust store
  bool randomize = true;                          ///< pick servers in random order (false: in list order)
  std::chrono::milliseconds connect_timeout{0};   ///< give up starting after this (0: never)
  std::chrono::milliseconds reconnect_wait{100};  ///< pause between reconnect attempts
  int reconnect_buffer_bytes = 8 << 20;           ///< what is kept while disconnected (bounded memory)
  int pending_msgs = 65536;                       ///< per inbound subscription; beyond: NATS drops (counted)
  int pending_bytes = 64 << 20;                   ///< per inbound subscription, bytes; beyond: NATS drops (counted)
};

/// One local channel bridged to one NATS subject (a "mappings" entry of the config).
struct BridgeMapping {
  std::string name;                                       ///< for logs and stats (default: channel)
  BridgeKind kind = BridgeKind::topic;                    ///< topic or queue
  std::string channel;                                    ///< local zipc name
  std::string subject;                                    ///< NATS subject (inbound: wildcards * and > allowed)
  BridgeDirection direction = BridgeDirection::outbound;  ///< which way messages go
  BridgeMode mode = BridgeMode::core;                     ///< core NATS or JetStream
  BridgeOverflow overflow = BridgeOverflow::block;        ///< when the next hop has no room
  std::string stream;     ///< jetstream: stream name (created when absent, covering subject)
  std::string durable;    ///< jetstream inbound: durable consumer name (default: host_id + "_" + name)
  bool envelope = false;  ///< inbound: prefix local messages with the origin headers
  /// Core outbound: messages already waiting go out together in one NATS
  /// message (Zipc-Count frames, docs/guide/bridge.md); a lone message goes alone.
  /// false: always one NATS message per local message (for non-bridge readers).
  bool batch = true;
  /// Core outbound: a batch goes out once it holds this many payload bytes
  /// (1 KiB to 1 MiB, the NATS server's default max_payload), cut into NATS
  /// messages no larger than the connected server takes (its max_payload,
  /// headers included). A local message larger than the server takes is
  /// dropped, counted in `lost` and named in last_error(). 16 KiB: on
  /// loopback the NATS server spent 25% more CPU time per byte on 60 KiB
  /// messages (docs/journal/2026-11-27-bridge-measurements.md, "Where the 4 KiB time goes").
  std::size_t batch_bytes = 16 * 1024;
  /// Outbound: how the thread reading the local channel waits for the next
  /// message. adaptive (default) spins briefly, stops spinning when the
  /// kernel needs its CPU for another thread (the NATS server, the client),
  /// then sleeps: on a 2-vCPU guest whose idle vCPUs halt it added 16-41 us
  /// less p50 than block at equal throughput (docs/guide/bridge.md, "The outbound
  /// wait's default"). block polls up to 4 us, then sleeps, and leaves every spare cycle to
  /// the server; busy_poll spins and takes a CPU for the mapping, for hosts
  /// with a core to spare.
  WaitOptions wait{WaitStrategy::adaptive};
  /// Inbound: a Zipc-Seq more than this far from its origin's expected one
  /// (ahead, or behind with a newer Zipc-Time) starts a new epoch of that
  /// origin (counted in `epochs`) instead of counting the jump in `lost`:
  /// no message, forged or not, adds more than this to `lost`.
  std::uint64_t seq_window = std::uint64_t{1} << 24;
  /// Inbound: origins (origin, channel) whose sequence is tracked; beyond,
  /// the least recently seen is forgotten (counted in `evicted`).
  std::size_t max_origins = 4096;
  /// Inbound JetStream: how long a gap in an origin's sequence is waited for
  /// (what follows held) before it is counted lost.
  std::chrono::milliseconds reorder_wait{10000};
  /// A file holding a shared secret (16 to 4096 bytes, mode 600): outbound
  /// signs each message (HMAC-SHA-256, Zipc-Auth header), inbound drops and
  /// counts (`rejected_auth`) what does not carry a valid one. Empty: off.
  std::string auth_key_file;
  bool create = true;                            ///< create the local channel when absent (with the sizes below)
  std::uint64_t topic_capacity_bytes = 1 << 22;  ///< created topic: ring bytes
  std::uint32_t max_message_size = 1 << 16;      ///< created topic: largest payload, bytes
  std::size_t queue_block_size = 4096;           ///< created queue: bytes per block
  std::size_t queue_block_count = 1024;          ///< created queue: blocks
};

/// Which threads move the messages.
enum class BridgeThreads : std::uint8_t {
  /// A thread per mapping direction (outbound reader; inbound read loop or
  /// callback): the application only publishes and reads its channels.
  own,
  /// No worker threads: the application's thread moves the messages when it
  /// calls Bridge::poll() (Aeron's "invoker" mode). No hand-off between the
  /// application's publish and the NATS write, nor between the socket and the
  /// application's read: on a host whose idle CPUs halt, each hand-off saved is
  /// a wake-up saved (docs/guide/bridge.md, "Driven by the caller"). Core mappings,
  /// outbound or inbound (not both); the connection is still made (and
  /// remade) in the background.
  caller,
};

/// A bridge's whole configuration (docs/guide/bridge.md): who it is, how it connects, what it maps.
struct BridgeConfig {
  std::string host_id;                         ///< origin id carried in headers (default: the host name)
  std::string state_dir;                       ///< positions files (required for jetstream mappings)
  BridgeThreads threads = BridgeThreads::own;  ///< worker threads, or the caller's poll()
  NatsOptions nats;                            ///< the NATS connection
  std::vector<BridgeMapping> mappings;         ///< the channels bridged
};

/// Reads a JSON config (format in docs/guide/bridge.md). Throws zipc::Error
/// (invalid_argument / not_found) naming the file and the offending field.
BridgeConfig load_bridge_config(const std::string& path);
/// As load_bridge_config, from JSON text; origin names the text in errors.
BridgeConfig parse_bridge_config(std::string_view text, std::string_view origin = "config");
/// Throws zipc::Error(invalid_argument) naming the first problem.
void validate(const BridgeConfig& config);

/// One mapping's counters (Bridge::stats).
struct BridgeStats {
  std::uint64_t forwarded = 0;   ///< local -> NATS (acked by JetStream in that mode)
  std::uint64_t received = 0;    ///< NATS -> local, published locally
  std::uint64_t lost = 0;        ///< sequence gaps seen inbound + drops by overflow=drop
  std::uint64_t duplicates = 0;  ///< inbound messages already delivered, dropped
  std::uint64_t loops = 0;       ///< inbound messages of our own origin, dropped
  std::uint64_t reconnects = 0;  ///< of the bridge's NATS connections, summed
  std::uint64_t errors = 0;      ///< failed NATS or local operations (retried)
  std::uint64_t lag = 0;         ///< outbound topic: messages published locally, not yet sent
  /// Inbound messages not delivered, by reason (docs/guide/bridge.md, "What the
  /// receiving bridge rejects"), here: NATS status or control messages.
  std::uint64_t rejected_status = 0;
  std::uint64_t rejected_header = 0;  ///< not delivered: a Zipc-* header missing, malformed or out of range
  std::uint64_t rejected_frame = 0;   ///< not delivered: batch frames that do not match the payload
  std::uint64_t rejected_size = 0;    ///< not delivered: larger than the local channel takes
  std::uint64_t rejected_auth = 0;    ///< not delivered: failed authentication (BridgeMapping::auth_key_file)
  std::uint64_t epochs = 0;           ///< sequence jumps beyond seq_window, taken as a new epoch of the origin
  std::uint64_t evicted = 0;          ///< origins forgotten beyond max_origins
};

/// The origin headers as a local message carries them (BridgeMapping::envelope).
struct BridgeEnvelope {
  std::string_view origin;             ///< the sending bridge's host_id
  std::string_view channel;            ///< the channel it was published on there
  std::uint64_t sequence = 0;          ///< its sequence number at the origin
  std::uint64_t origin_ns = 0;         ///< CLOCK_REALTIME when the origin published it
  std::span<const std::byte> payload;  ///< the message itself
};
/// Envelope layout (little endian): u32 magic 0x5A425231 ("ZBR1"), u16 total
/// header bytes (a multiple of 8), u8 origin length, u8 channel length, u64
/// sequence, u64 origin_ns, origin bytes, channel bytes, zero padding, payload.
inline constexpr std::uint32_t kEnvelopeMagic = 0x5A425231;
/// The envelope of a local message (views into message), or nullopt when it carries none or a malformed one.
std::optional<BridgeEnvelope> parse_envelope(std::span<const std::byte> message) noexcept;

/// Moves messages between local zipc channels and NATS subjects, as its config maps them (docs/guide/bridge.md).
class Bridge {
 public:
  explicit Bridge(BridgeConfig config);  ///< validates
  ~Bridge();                             ///< stops
  Bridge(const Bridge&) = delete;
  Bridge& operator=(const Bridge&) = delete;

  /// Opens the local channels (throws zipc::Error) and starts connecting; the
  /// mappings run once connected. Connection failures are retried with back-off
  /// (see last_error()); after nats.connect_timeout start gives up and
  /// failed() says so.
  void start();
  /// Stops the mappings and the connection and joins the threads (the destructor does the same).
  void stop() noexcept;

  /// The NATS connection (both of them, with a separate inbound one) is up now.
  [[nodiscard]] bool connected() const noexcept;
  /// Connected once and every mapping running (subscriptions made).
  [[nodiscard]] bool ready() const noexcept;
  [[nodiscard]] bool failed() const noexcept;  ///< gave up connecting
  /// The connection's last error ("" when none).
  [[nodiscard]] std::string last_error() const;
  /// Mappings in the config.
  [[nodiscard]] std::size_t mapping_count() const noexcept;
  /// The counters of mapping number `mapping` (all zero for a number out of range).
  [[nodiscard]] BridgeStats stats(std::size_t mapping) const;
  /// The config the bridge runs.
  [[nodiscard]] const BridgeConfig& config() const noexcept;

  /// BridgeThreads::caller only (else throws zipc::Error(invalid_argument)):
  /// moves what is ready now in every mapping (local channel -> NATS, what
  /// the inbound socket holds -> local channel); when nothing was, waits up
  /// to `timeout` for an outbound channel or the inbound socket to have
  /// something, and moves that. Returns the messages moved. Call it from one
  /// thread at a time (concurrent calls serialize), often enough for the
  /// traffic: what the application publishes waits in its channel until the
  /// next poll, and the inbound NATS connection is read only here. Before
  /// ready() it moves nothing but the connection's handshake (the
  /// subscriptions and their confirmation: keep polling) and returns 0;
  /// before start() it sleeps up to `timeout` (10 ms at most) and returns 0.
  /// An inbound message that finds its local channel full under
  /// overflow=block stays with the bridge until a later poll finds room (the
  /// application may be the very reader that has to make it), never blocking
  /// the caller.
  std::size_t poll(std::chrono::nanoseconds timeout = std::chrono::nanoseconds(0));

  struct Impl;

 private:
  std::unique_ptr<Impl> impl_;
};

}  // namespace zipc
