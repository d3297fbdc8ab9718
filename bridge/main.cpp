// zipc-bridge: maps local topics and queues to NATS subjects (docs/guide/bridge.md).
//
//   zipc-bridge --config bridge.json
//   zipc-bridge --server nats://127.0.0.1:4222 --channel prices --subject zipc.prices --direction out
#include <CLI/CLI.hpp>
#include <atomic>
#include <chrono>
#include <csignal>
#include <cstdio>
#include <iostream>
#include <string>
#include <thread>
#include <vector>

#include "zipc/bridge.hpp"
#include "zipc/error.hpp"

namespace {

constexpr zipc::WaitStrategy kWaitStrategies[] = {zipc::WaitStrategy::adaptive, zipc::WaitStrategy::block,
                                                  zipc::WaitStrategy::busy_poll};
std::vector<std::string> wait_names() {
  std::vector<std::string> v;
  for (zipc::WaitStrategy s : kWaitStrategies) v.emplace_back(zipc::to_string(s));
  return v;
}

// The longest --connect-timeout-ms / --stats-ms taken: a day.
constexpr std::int64_t kMaxMs = 86'400'000;

std::atomic<bool> g_stop{false};
void on_signal(int) {
  g_stop.store(true);
}

void print_stats(const zipc::Bridge& b) {
  for (std::size_t i = 0; i < b.mapping_count(); ++i) {
    const auto s = b.stats(i);
    using ull = unsigned long long;
    std::printf(
        "stats %s forwarded=%llu received=%llu lost=%llu duplicates=%llu loops=%llu reconnects=%llu errors=%llu "
        "lag=%llu rejected_status=%llu rejected_header=%llu rejected_frame=%llu rejected_size=%llu "
        "rejected_auth=%llu epochs=%llu evicted=%llu\n",
        b.config().mappings[i].name.c_str(), static_cast<ull>(s.forwarded), static_cast<ull>(s.received),
        static_cast<ull>(s.lost), static_cast<ull>(s.duplicates), static_cast<ull>(s.loops),
        static_cast<ull>(s.reconnects), static_cast<ull>(s.errors), static_cast<ull>(s.lag),
        static_cast<ull>(s.rejected_status), static_cast<ull>(s.rejected_header), static_cast<ull>(s.rejected_frame),
        static_cast<ull>(s.rejected_size), static_cast<ull>(s.rejected_auth), static_cast<ull>(s.epochs),
        static_cast<ull>(s.evicted));
  }
  std::fflush(stdout);
}

}  // namespace

int main(int argc, char** argv) {
  CLI::App app{"zipc-bridge: carry zipc topics and queues over NATS (docs/guide/bridge.md)"};
  std::string config_file, kind = "topic", direction = "out", mode = "core", overflow = "block";
  std::string wait;  // empty: BridgeMapping's default
  zipc::BridgeConfig cfg;
  zipc::BridgeMapping m;
  std::int64_t connect_timeout_ms = 0, stats_ms = 0;
  std::string threads;
  std::vector<std::string> servers;
  app.add_option("--config", config_file, "JSON config file (format: docs/guide/bridge.md)");
  app.add_option("--host-id", cfg.host_id, "origin id carried in headers (default: host name)");
  app.add_option("--state-dir", cfg.state_dir, "where positions are kept (required for jetstream)");
  app.add_option("-s,--server", servers, "NATS server URL (repeat for a cluster)");
  app.add_option("--user", cfg.nats.user, "NATS user");
  app.add_option("--password", cfg.nats.password, "NATS password");
  app.add_option("--token", cfg.nats.token, "NATS token");
  app.add_option("--creds", cfg.nats.creds_file, "NATS .creds file");
  app.add_flag("--tls", cfg.nats.tls, "TLS with the system trust store");
  app.add_option("--tls-ca", cfg.nats.tls_ca, "CA certificates (PEM)");
  app.add_option("--tls-cert", cfg.nats.tls_cert, "client certificate chain (PEM)");
  app.add_option("--tls-key", cfg.nats.tls_key, "client key (PEM)");
  app.add_option("--connect-timeout-ms", connect_timeout_ms, "give up starting after this (0: retry forever)")
      ->check(CLI::Range(std::int64_t{0}, kMaxMs));
  app.add_option("--kind", kind, "topic|queue")->check(CLI::IsMember({"topic", "queue"}));
  app.add_option("--channel", m.channel, "local topic or queue name");
  app.add_option("--subject", m.subject, "NATS subject (inbound: wildcards allowed)");
  app.add_option("--direction", direction, "out|in|both")->check(CLI::IsMember({"out", "in", "both"}));
  app.add_option("--mode", mode, "core|jetstream")->check(CLI::IsMember({"core", "jetstream"}));
  app.add_option("--overflow", overflow, "block|drop")->check(CLI::IsMember({"block", "drop"}));
  app.add_option("--stream", m.stream, "JetStream stream name");
  app.add_option("--durable", m.durable, "JetStream durable consumer name (inbound)");
  app.add_flag("--envelope", m.envelope, "inbound: prefix local messages with the origin headers");
  app.add_option("--batch-bytes", m.batch_bytes, "core outbound: a batch goes out at this many bytes (16384)")
      ->check(CLI::Range(std::size_t{1024}, std::size_t{1} << 20));
  app.add_option("--auth-key-file", m.auth_key_file,
                 "authenticate messages (HMAC-SHA-256) with the secret in this file (mode 600)");
  app.add_option("--wait", wait, "outbound reader: adaptive (default), block, busy (takes a CPU)")
      ->check(CLI::IsMember(wait_names()));
  app.add_option("--threads", threads,
                 "own (a thread per mapping direction, default) or caller (one thread moves everything: core mappings)")
      ->check(CLI::IsMember({"own", "caller"}));
  app.add_option("--stats-ms", stats_ms, "print per-mapping stats lines this often (0: only at exit)")
      ->check(CLI::Range(std::int64_t{0}, kMaxMs));
  try {
    app.parse(argc, argv);
  } catch (const CLI::Success& e) {  // --help
    return app.exit(e);
  } catch (const CLI::ParseError& e) {
    // Usage errors exit 2 (docs/guide/bridge.md), in one line naming the flag.
    std::string what = e.what();
    for (char& c : what)
      if (c == '\n') c = ' ';
    std::cerr << "zipc-bridge: " << what << " (see --help)" << std::endl;
    return 2;
  }

  try {
    if (!config_file.empty()) {
      if (!m.channel.empty())
        throw zipc::Error(zipc::Errc::invalid_argument, "--config and --channel exclude each other");
      zipc::BridgeConfig file = zipc::load_bridge_config(config_file);
      if (!cfg.host_id.empty()) file.host_id = cfg.host_id;
      if (!cfg.state_dir.empty()) file.state_dir = cfg.state_dir;
      cfg = std::move(file);
    } else {
      if (m.channel.empty() || m.subject.empty())
        throw zipc::Error(zipc::Errc::invalid_argument, "give --config FILE, or --channel and --subject");
      m.kind = kind == "queue" ? zipc::BridgeKind::queue : zipc::BridgeKind::topic;
      m.direction = direction == "in"     ? zipc::BridgeDirection::inbound
                    : direction == "both" ? zipc::BridgeDirection::both
                                          : zipc::BridgeDirection::outbound;
      m.mode = mode == "jetstream" ? zipc::BridgeMode::jetstream : zipc::BridgeMode::core;
      m.overflow = overflow == "drop" ? zipc::BridgeOverflow::drop : zipc::BridgeOverflow::block;
      for (zipc::WaitStrategy s : kWaitStrategies)  // by the library's names (zipc::to_string)
        if (wait == zipc::to_string(s)) m.wait.strategy = s;
      cfg.mappings.push_back(m);
    }
    if (!threads.empty()) cfg.threads = threads == "caller" ? zipc::BridgeThreads::caller : zipc::BridgeThreads::own;
    if (!servers.empty()) cfg.nats.servers = servers;
    if (connect_timeout_ms > 0) cfg.nats.connect_timeout = std::chrono::milliseconds(connect_timeout_ms);
    zipc::Bridge bridge(cfg);
    std::signal(SIGINT, on_signal);
    std::signal(SIGTERM, on_signal);
    bridge.start();
    std::string shown;
    bool was_ready = false;
    auto next_stats = std::chrono::steady_clock::now();
    const bool caller = cfg.threads == zipc::BridgeThreads::caller;
    while (!g_stop.load()) {
      if (caller) {  // this thread moves the messages, between the checks below
        const auto until = std::chrono::steady_clock::now() + std::chrono::milliseconds(20);
        while (!g_stop.load() && std::chrono::steady_clock::now() < until) bridge.poll(std::chrono::milliseconds(5));
      } else {
        std::this_thread::sleep_for(std::chrono::milliseconds(20));
      }
      std::string err = bridge.last_error();
      if (err != shown && !err.empty()) std::cerr << "zipc-bridge: " << err << std::endl;
      shown = err;
      if (bridge.ready() && !was_ready) {
        std::cout << "zipc-bridge: ready, " << bridge.mapping_count() << " mapping(s) running" << std::endl;
      }
      was_ready = bridge.ready();
      if (bridge.failed()) {
        std::cerr << "zipc-bridge: could not connect to NATS; giving up" << std::endl;
        return 3;
      }
      if (stats_ms > 0 && std::chrono::steady_clock::now() >= next_stats) {
        print_stats(bridge);
        next_stats = std::chrono::steady_clock::now() + std::chrono::milliseconds(stats_ms);
      }
    }
    bridge.stop();
    print_stats(bridge);
  } catch (const zipc::Error& e) {
    std::cerr << "zipc-bridge: " << e.what() << std::endl;
    return e.errc() == zipc::Errc::invalid_argument || e.errc() == zipc::Errc::not_found ? 2 : 1;
  }
  return 0;
}
