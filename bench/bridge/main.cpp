// zipc-bench-bridge: zipc -> bridge -> NATS -> bridge -> zipc on loopback,
// beside the raw NATS C client (publish and subscribe on the same server) and
// beside local zipc (one topic, no network). Core and JetStream bridge modes.
//
//   zipc-bench-bridge [--server nats://127.0.0.1:4222] [--repetitions 5] [--json out.json]
//   zipc-bench-bridge --out rows.json [--full]     (as an extra of zipc-bench / make bench)
//
// Rows are written in zipc-bench's form (workload "nats-bridge", one-way
// latency, ratios to raw NATS; the JetStream bridge's to the NATS C client
// publishing asynchronously into a stream and pulling from it, "raw
// JetStream"). As an extra (--out) it runs the main rows only: local zipc,
// raw NATS, raw JetStream, bridge core and JetStream, 5 repetitions;
// --full adds the diagnostic rows (busy, adaptive, 60 KiB batches) and runs 9.
//
// Without --server it starts its own nats-server (JetStream store in a
// temporary directory) on a random loopback port and kills it at the end.
// Each row: throughput (messages delivered per second, flat out, with the
// count lost if any) and one-way latency p50/p99/p99.9 at a paced 5 k msgs/s
// (send time in the payload, CLOCK_REALTIME, same host). Repetitions
// alternate between the transports; each row's ratio and added latency are
// taken against the raw NATS run of the same repetition, and the table
// shows their median and range.
#include <nats/nats.h>
#include <unistd.h>

#include <CLI/CLI.hpp>
#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <functional>
#include <iostream>
#include <map>
#include <mutex>
#include <nlohmann/json.hpp>
#include <optional>
#include <string_view>
#include <thread>
#include <vector>

#include "nats_server.hpp"
#include "repetitions.hpp"
#include "zipc/bridge.hpp"
#include "zipc/topic.hpp"

namespace {

using namespace std::chrono_literals;
using Clock = std::chrono::steady_clock;

std::uint64_t now_ns() {
  return static_cast<std::uint64_t>(
      std::chrono::duration_cast<std::chrono::nanoseconds>(std::chrono::system_clock::now().time_since_epoch())
          .count());
}

struct Run {
  double msgs_per_s = 0;
  std::uint64_t lost = 0;
  double p50_us = 0, p99_us = 0, p999_us = 0;
};

// Collects (send stamp -> arrival) samples and counts arrivals.
struct Sink {
  std::atomic<std::uint64_t> count{0};
  std::atomic<std::uint64_t> last_ns{0};
  // Latency samples, under mu: the receiving thread adds while recording, and
  // a straggler of a paced run may arrive while the runner reads or clears
  // them (a loaded host delays a thread for longer than any grace period).
  std::mutex mu;
  std::vector<std::uint64_t> lat;
  std::atomic<bool> record{false};
  void on(const void* data, std::size_t n) {
    const std::uint64_t t = now_ns();
    if (record.load(std::memory_order_relaxed) && n >= 8) {
      std::uint64_t sent;
      std::memcpy(&sent, data, 8);
      std::lock_guard lock(mu);
      lat.push_back(t - sent);
    }
    last_ns.store(t, std::memory_order_relaxed);
    count.fetch_add(1, std::memory_order_release);  // release: lat is complete up to count
  }
};

// A transport: send(bytes) and a sink that sees arrivals.
struct Transport {
  virtual ~Transport() = default;
  virtual void send(const std::byte* data, std::size_t n) = 0;
  virtual void flush() {}
  Sink sink;
};

struct RawNats : Transport {
  natsConnection *pub = nullptr, *sub_conn = nullptr;
  natsSubscription* sub = nullptr;
  std::string subject;
  RawNats(const std::string& url, const std::string& subj) : subject(subj) {
    if (natsConnection_ConnectTo(&pub, url.c_str()) != NATS_OK ||
        natsConnection_ConnectTo(&sub_conn, url.c_str()) != NATS_OK)
      throw std::runtime_error("raw nats: cannot connect to " + url);
    natsConnection_Subscribe(
        &sub, sub_conn, subject.c_str(),
        [](natsConnection*, natsSubscription*, natsMsg* m, void* c) {
          static_cast<Sink*>(c)->on(natsMsg_GetData(m), static_cast<std::size_t>(natsMsg_GetDataLength(m)));
          natsMsg_Destroy(m);
        },
        &sink);
    natsSubscription_SetPendingLimits(sub, 65536, 64 << 20);  // as the bridge's default
    natsConnection_Flush(sub_conn);
  }
  ~RawNats() override {
    natsSubscription_Unsubscribe(sub);
    natsSubscription_Destroy(sub);
    natsConnection_Destroy(pub);
    natsConnection_Destroy(sub_conn);
  }
  void send(const std::byte* d, std::size_t n) override {
    while (natsConnection_Publish(pub, subject.c_str(), d, static_cast<int>(n)) != NATS_OK)
      std::this_thread::sleep_for(50us);
  }
  void flush() override { natsConnection_Flush(pub); }
};

// The NATS C client on its own with JetStream, as its documentation and
// examples (examples/js-sub.c) show it: js_PublishAsync into a file-storage
// stream (no msg ids: a plain publisher), js_PublishAsyncComplete to await
// the acknowledgements (flush), and a durable consumer read by an
// asynchronous subscription (the example's default) that acknowledges each
// message explicitly. Not a pull consumer: the C client Debian ships (3.4.1)
// overflows its fetch array when a timed-out fetch's messages arrive late
// (fixed upstream in 3.8.3), and the paced latency runs time fetches out
// (docs/guide/bridge.md, "Measured costs"). The bridge's JetStream
// row is measured against this one.
struct RawJetStream : Transport {
  natsConnection *pub = nullptr, *sub_conn = nullptr;
  jsCtx *js = nullptr, *sub_js = nullptr;
  natsSubscription* sub = nullptr;
  std::string subject, stream;
  RawJetStream(const std::string& url, const std::string& tag) : subject("bench.rawjs." + tag), stream("RAWJS_" + tag) {
    if (natsConnection_ConnectTo(&pub, url.c_str()) != NATS_OK ||
        natsConnection_ConnectTo(&sub_conn, url.c_str()) != NATS_OK ||
        natsConnection_JetStream(&js, pub, nullptr) != NATS_OK ||
        natsConnection_JetStream(&sub_js, sub_conn, nullptr) != NATS_OK)
      throw std::runtime_error("raw jetstream: cannot connect to " + url);
    jsStreamConfig sc;
    jsStreamConfig_Init(&sc);
    sc.Name = stream.c_str();
    const char* subjects[1] = {subject.c_str()};
    sc.Subjects = subjects;
    sc.SubjectsLen = 1;
    sc.Storage = js_FileStorage;  // as the bridge's streams
    jsStreamInfo* si = nullptr;
    if (js_AddStream(&si, js, &sc, nullptr, nullptr) != NATS_OK) throw std::runtime_error("raw jetstream: no stream");
    jsStreamInfo_Destroy(si);
    jsSubOptions so;
    jsSubOptions_Init(&so);
    so.Stream = stream.c_str();
    so.ManualAck = true;  // acknowledged below, one by one, as the pull consumer did
    so.Config.AckPolicy = js_AckExplicit;
    so.Config.MaxAckPending = 65536;  // as the bridge's consumers
    const std::string durable = "raw" + tag;
    so.Config.Durable = durable.c_str();
    if (js_Subscribe(
            &sub, sub_js, subject.c_str(),
            [](natsConnection*, natsSubscription*, natsMsg* m, void* c) {
              static_cast<Sink*>(c)->on(natsMsg_GetData(m), static_cast<std::size_t>(natsMsg_GetDataLength(m)));
              natsMsg_Ack(m, nullptr);
              natsMsg_Destroy(m);
            },
            &sink, nullptr, &so, nullptr) != NATS_OK)
      throw std::runtime_error("raw jetstream: no subscription");
    natsSubscription_SetPendingLimits(sub, -1, -1);  // as the example
  }
  ~RawJetStream() override {
    natsSubscription_Unsubscribe(sub);
    natsSubscription_Destroy(sub);
    js_DeleteStream(js, stream.c_str(), nullptr, nullptr);
    jsCtx_Destroy(js);
    jsCtx_Destroy(sub_js);
    natsConnection_Destroy(pub);
    natsConnection_Destroy(sub_conn);
  }
  void send(const std::byte* d, std::size_t n) override {
    while (js_PublishAsync(js, subject.c_str(), d, static_cast<int>(n), nullptr) != NATS_OK)
      std::this_thread::sleep_for(50us);
  }
  void flush() override { js_PublishAsyncComplete(js, nullptr); }
};

// Reads a topic in a thread into the sink.
struct TopicReader {
  zipc::Subscriber s;
  std::atomic<bool> stop{false};
  std::thread t;
  TopicReader(zipc::Topic& topic, Sink& sink) : s(topic.subscribe({zipc::From::latest(), zipc::Delivery::reliable})) {
    t = std::thread([this, &sink] {
      while (!stop.load(std::memory_order_relaxed)) {
        zipc::TopicReadLoan v = s.acquire(20ms);
        if (static_cast<bool>(v)) sink.on(v.data().data(), v.data().size());
      }
    });
  }
  ~TopicReader() {
    stop = true;
    t.join();
  }
};

struct LocalZipc : Transport {
  std::string name;
  zipc::Topic topic;
  zipc::Publisher pub;
  std::unique_ptr<TopicReader> reader;
  explicit LocalZipc(const std::string& n) : name(n) {
    zipc::Topic::remove(name);
    zipc::TopicOptions o;
    o.capacity_bytes = 1 << 22;
    topic = zipc::Topic::create(name, o);
    pub = topic.publisher();
    reader = std::make_unique<TopicReader>(topic, sink);
  }
  ~LocalZipc() override {
    reader.reset();
    zipc::Topic::remove(name);
  }
  void send(const std::byte* d, std::size_t n) override { (void)pub.publish(std::span(d, n), 10s); }
};

// BridgeThreads::caller's receiving application: one thread polls bridge B
// (which reads the socket and publishes into the topic) and reads the topic.
struct PollingReader {
  zipc::Subscriber s;
  std::atomic<bool> stop{false};
  std::thread t;
  PollingReader(zipc::Bridge& bridge, zipc::Topic& topic, Sink& sink)
      : s(topic.subscribe({zipc::From::latest(), zipc::Delivery::reliable})) {
    t = std::thread([this, &bridge, &sink] {
      while (!stop.load(std::memory_order_relaxed)) {
        bridge.poll(20ms);
        for (zipc::TopicReadLoan v = s.try_acquire(); static_cast<bool>(v); v = s.try_acquire())
          sink.on(v.data().data(), v.data().size());
      }
    });
  }
  ~PollingReader() {
    stop = true;
    t.join();
  }
};

// The sending application of BridgeThreads::caller polls bridge A after every
// kPollEvery messages sent flat out (one batch for NATS from each poll, as
// the raw NATS client's flusher writes what piled up), and after each paced
// latency message (flush(), as the raw NATS publisher flushes each).
constexpr std::uint64_t kPollEvery = 64;

struct Bridged : Transport {
  std::string a_name, b_name;
  std::unique_ptr<zipc::Bridge> a, b;
  zipc::Topic ta, tb;
  zipc::Publisher pub;
  std::unique_ptr<TopicReader> reader;
  std::unique_ptr<PollingReader> polling_reader;
  bool caller = false;
  std::uint64_t sent = 0;
  Bridged(const std::string& url, const std::string& tag, zipc::BridgeMode mode, const std::string& state,
          zipc::WaitOptions outbound_wait = {}, std::size_t batch_bytes = 0,
          zipc::BridgeThreads threads = zipc::BridgeThreads::own)
      : caller(threads == zipc::BridgeThreads::caller) {
    a_name = "bench-bridge." + tag + ".hostA";
    b_name = "bench-bridge." + tag + ".hostB";
    zipc::Topic::remove(a_name);
    zipc::Topic::remove(b_name);
    const std::string subject = "bench." + tag;
    auto cfg = [&](const std::string& host, const std::string& ch, zipc::BridgeDirection dir) {
      zipc::BridgeConfig c;
      c.host_id = host;
      c.state_dir = state + "/" + host;
      c.nats.servers = {url};
      c.threads = threads;
      zipc::BridgeMapping m;
      m.channel = ch;
      m.subject = subject;
      m.direction = dir;
      m.mode = mode;
      m.stream = "BENCH_" + tag;
      m.wait = outbound_wait;
      if (batch_bytes != 0) m.batch_bytes = batch_bytes;
      c.mappings.push_back(m);
      return c;
    };
    a = std::make_unique<zipc::Bridge>(cfg("hostA", a_name, zipc::BridgeDirection::outbound));
    b = std::make_unique<zipc::Bridge>(cfg("hostB", b_name, zipc::BridgeDirection::inbound));
    a->start();
    b->start();
    for (int i = 0; i < 1000 && !(a->ready() && b->ready()); ++i) {
      std::this_thread::sleep_for(10ms);
      if (caller) a->poll(), b->poll();  // (nothing to move yet; the first polls attach the channels)
    }
    if (!a->ready() || !b->ready()) throw std::runtime_error("bridge not ready: " + a->last_error() + b->last_error());
    ta = zipc::Topic::open(a_name);
    tb = zipc::Topic::open(b_name);
    pub = ta.publisher();
    if (caller)
      polling_reader = std::make_unique<PollingReader>(*b, tb, sink);
    else
      reader = std::make_unique<TopicReader>(tb, sink);
  }
  ~Bridged() override {
    reader.reset();
    polling_reader.reset();
    a->stop();
    b->stop();
    zipc::Topic::remove(a_name);
    zipc::Topic::remove(b_name);
  }
  void send(const std::byte* d, std::size_t n) override {
    if (!caller) {
      (void)pub.publish(std::span(d, n), 10s);
      return;
    }
    // Never blocked on a full topic A: only this thread's polls empty it.
    while (pub.try_publish(std::span(d, n)).status == zipc::Status::full) a->poll();
    if (++sent % kPollEvery == 0) a->poll();
  }
  void flush() override {
    if (caller) a->poll();
  }
  std::uint64_t lost() const { return b->stats(0).lost; }
};

// The rows: the name printed and given to --transports, the row's transport
// and wait in zipc-bench's results, and how to set it up (server URL, a tag
// unique to this run, the state directory).
struct RowKind {
  const char* name;
  const char* transport;
  const char* wait;
  bool main;             // run by make bench (--out without --full)
  const char* baseline;  // the row its ratios are taken to
  std::function<std::unique_ptr<Transport>(const std::string&, const std::string&, const std::string&)> make;
};
std::unique_ptr<Transport> bridged(const std::string& url, const std::string& tag, const std::string& state,
                                   zipc::BridgeMode mode, zipc::WaitStrategy wait, std::size_t batch_bytes = 0,
                                   zipc::BridgeThreads threads = zipc::BridgeThreads::own) {
  return std::make_unique<Bridged>(url, tag, mode, state, zipc::WaitOptions{wait}, batch_bytes, threads);
}
const std::vector<RowKind>& row_kinds() {
  using zipc::BridgeMode;
  using zipc::WaitStrategy;
  static const std::vector<RowKind> v = {
      {"local zipc", "zipc-topic-local", "adaptive", true, "raw NATS",
       [](auto&, auto& t, auto&) { return std::make_unique<LocalZipc>("bench-bridge.local." + t); }},
      {"raw NATS", "nats-c-client", "block", true, "raw NATS",
       [](auto& url, auto& t, auto&) { return std::make_unique<RawNats>(url, "bench.raw." + t); }},
      {"raw JetStream", "nats-c-client-jetstream", "block", true, "raw NATS",
       [](auto& url, auto& t, auto&) { return std::make_unique<RawJetStream>(url, t); }},
      // The main rows use the mapping's default outbound wait (adaptive).
      {"bridge core", "zipc-bridge-core", "adaptive", true, "raw NATS",
       [](auto& url, auto& t, auto& st) { return bridged(url, t, st, BridgeMode::core, WaitStrategy::adaptive); }},
      // No bridge threads: the sending and the receiving application's
      // threads move the messages (Bridge::poll()).
      {"bridge core, caller", "zipc-bridge-core-caller", "caller", true, "raw NATS",
       [](auto& url, auto& t, auto& st) {
         return bridged(url, t, st, BridgeMode::core, WaitStrategy::adaptive, 0, zipc::BridgeThreads::caller);
       }},
      {"bridge core, busy", "zipc-bridge-core", "busy", false, "raw NATS",
       [](auto& url, auto& t, auto& st) { return bridged(url, t, st, BridgeMode::core, WaitStrategy::busy_poll); }},
      {"bridge core, block", "zipc-bridge-core", "block", false, "raw NATS",
       [](auto& url, auto& t, auto& st) { return bridged(url, t, st, BridgeMode::core, WaitStrategy::block); }},
      {"bridge core, 60 KiB batches", "zipc-bridge-core-60k", "adaptive", false, "raw NATS",
       [](auto& url, auto& t, auto& st) {
         return bridged(url, t, st, BridgeMode::core, WaitStrategy::adaptive, 60 * 1024);
       }},
      {"bridge JetStream", "zipc-bridge-jetstream", "adaptive", true, "raw JetStream",
       [](auto& url, auto& t, auto& st) { return bridged(url, t, st, BridgeMode::jetstream, WaitStrategy::adaptive); }},
  };
  return v;
}

double pct(std::vector<std::uint64_t>& v, double p) {
  if (v.empty()) return 0;
  std::sort(v.begin(), v.end());
  return static_cast<double>(v[std::min(v.size() - 1, static_cast<std::size_t>(p * static_cast<double>(v.size())))]) /
         1000.0;
}

// Flat out: n messages; delivered rate = arrivals / (last arrival - first send).
// Waits for the last arrival until nothing more came for `quiet`.
void throughput(Transport& t, std::size_t size, std::uint64_t n, std::chrono::milliseconds quiet, Run& r) {
  std::vector<std::byte> buf(size, std::byte{1});
  const std::uint64_t base = t.sink.count.load();
  const std::uint64_t t0 = now_ns();
  for (std::uint64_t i = 0; i < n; ++i) {
    std::uint64_t ts = now_ns();
    std::memcpy(buf.data(), &ts, 8);
    t.send(buf.data(), size);
  }
  t.flush();
  // Until everything arrived, or nothing more for `quiet`.
  std::uint64_t seen = 0;
  auto quiet_since = Clock::now();
  while (t.sink.count.load() - base < n && Clock::now() - quiet_since < quiet) {
    std::this_thread::sleep_for(1ms);
    if (t.sink.count.load() != seen) seen = t.sink.count.load(), quiet_since = Clock::now();
  }
  const std::uint64_t got = t.sink.count.load() - base;
  r.msgs_per_s = static_cast<double>(got) / (static_cast<double>(t.sink.last_ns.load() - t0) / 1e9);
  r.lost = n - got;
}

// Paced: n messages at `rate` per second, one-way latency of each.
void latency(Transport& t, std::size_t size, std::uint64_t n, double rate, Run& r) {
  std::vector<std::byte> buf(size, std::byte{2});
  {
    std::lock_guard lock(t.sink.mu);
    t.sink.lat.clear();
    t.sink.lat.reserve(n);
  }
  const std::uint64_t base = t.sink.count.load(std::memory_order_acquire);
  t.sink.record = true;
  const auto period = std::chrono::nanoseconds(static_cast<std::int64_t>(1e9 / rate));
  auto next = Clock::now();
  for (std::uint64_t i = 0; i < n; ++i) {
    std::this_thread::sleep_until(next);  // (not a spin: the machine may have few cores)
    next += period;
    std::uint64_t ts = now_ns();
    std::memcpy(buf.data(), &ts, 8);
    t.send(buf.data(), size);
    t.flush();
  }
  auto end = Clock::now() + 2s;
  while (t.sink.count.load(std::memory_order_acquire) - base < n && Clock::now() < end)
    std::this_thread::sleep_for(1ms);
  t.sink.record = false;
  std::this_thread::sleep_for(5ms);
  std::vector<std::uint64_t> lat;
  {
    std::lock_guard lock(t.sink.mu);
    lat = t.sink.lat;
  }
  r.p50_us = pct(lat, 0.50);
  r.p99_us = pct(lat, 0.99);
  r.p999_us = pct(lat, 0.999);
}

int run(int argc, char** argv) {
  CLI::App app{"zipc-bench-bridge: the NATS bridge beside raw NATS and local zipc"};
  std::string server, json_out, rows_out;
  bool full = false;
  int reps = zipc::bench::kDefaultRepetitions;
  std::uint64_t n_small = 200000, n_large = 40000, n_lat = 5000;
  double rate = 5000;
  int quiet_ms = 300;
  app.add_option("--server", server, "an existing nats-server URL (default: start one)");
  app.add_option("--repetitions", reps, "alternating runs per row; the median is reported");
  app.add_option("--json", json_out, "write the rows here (every row unless --transports)");
  app.add_option("--out", rows_out, "as zipc-bench's extra: write the rows here, the main rows only unless --full");
  app.add_flag("--full", full, "every row, at least 9 repetitions");
  app.add_option("--messages", n_small, "throughput messages, 100 B");
  app.add_option("--messages-4k", n_large, "throughput messages, 4 KiB");
  app.add_option("--latency-messages", n_lat, "latency samples per run");
  app.add_option("--rate", rate, "latency runs: messages per second");
  app.add_option("--quiet-ms", quiet_ms,
                 "throughput runs end this long after the last arrival (longer under valgrind)");
  std::vector<std::size_t> sizes{100, 4096};
  app.add_option("--sizes", sizes, "message sizes to run (bytes)");
  std::vector<std::string> only;
  app.add_option("--transports", only, "run only these rows (ratios need each row's baseline among them)");
  CLI11_PARSE(app, argc, argv);
  const bool extra = !rows_out.empty();  // run by zipc-bench: the main rows, unless --full
  if (full) reps = std::max(reps, 9);

  std::string tmp =
      (std::filesystem::temp_directory_path() / ("zipc-bench-bridge-" + std::to_string(::getpid()))).string();
  std::filesystem::create_directories(tmp);
  std::optional<zipc::bridge_test::NatsServer> own_server;  // killed at scope exit
  if (server.empty()) {
    own_server.emplace(tmp);
    server = own_server->url();
  }

  std::vector<const RowKind*> kinds;
  for (const RowKind& k : row_kinds())
    if (only.empty() ? (!extra || full || k.main) : std::find(only.begin(), only.end(), k.name) != only.end())
      kinds.push_back(&k);
  std::map<std::pair<std::string, std::size_t>, std::vector<Run>> runs;
  int tag = 0;
  for (int rep = 0; rep < reps; ++rep) {
    for (std::size_t size : sizes) {
      for (const RowKind* kind : kinds) {
        const std::string name = kind->name;
        const std::string t = std::to_string(::getpid()) + "_" + std::to_string(tag++);
        std::unique_ptr<Transport> tr = kind->make(server, t, tmp);
        Run r;
        const bool js = kind->transport == std::string_view("zipc-bridge-jetstream") ||
                        kind->transport == std::string_view("nats-c-client-jetstream");
        std::uint64_t n = size <= 1024 ? n_small : n_large;
        if (js) n /= 4;  // acknowledged and stored: slower, fewer messages keep the run short
        Run warm;
        latency(*tr, size, 200, rate, warm);  // connections, pages and wait strategies warm
        latency(*tr, size, js ? n_lat / 2 : n_lat, js ? rate / 2 : rate, r);
        throughput(*tr, size, n, std::chrono::milliseconds(quiet_ms), r);
        if (auto* b = dynamic_cast<Bridged*>(tr.get())) r.lost += b->lost();
        runs[{name, size}].push_back(r);
        std::fprintf(stderr, "rep %d %-17s %5zu B: %10.0f msgs/s lost %llu  p50 %.1f p99 %.1f p99.9 %.1f us\n", rep,
                     name.c_str(), size, r.msgs_per_s, static_cast<unsigned long long>(r.lost), r.p50_us, r.p99_us,
                     r.p999_us);
      }
    }
  }
  own_server.reset();
  std::error_code ec;
  std::filesystem::remove_all(tmp, ec);

  // Ratios and differences are taken within each repetition (a row against
  // the raw NATS run next to it in time, so a placement change of the host's
  // vCPUs between repetitions does not enter them); the table shows their
  // median and, in brackets, their range over the repetitions.
  using zipc::bench::median_of;
  auto range = [](const std::vector<double>& v) {
    const auto [lo, hi] = std::minmax_element(v.begin(), v.end());
    return std::pair{*lo, *hi};
  };
  // One row form for --json and --out: zipc-bench's (workload, transport,
  // wait, size; one-way latency), with the ratios to raw NATS beside it.
  // Without a raw NATS run (--transports) the ratios are left out.
  nlohmann::json rows = nlohmann::json::array();
  std::printf(
      "| transport | size | msgs/s | vs baseline [range] | baseline | p50 us | p99 us | p99.9 us | p50 over baseline "
      "[range] |\n");
  std::printf("|---|---|---|---|---|---|---|---|---|\n");
  for (std::size_t size : sizes) {
    for (const RowKind* kind : kinds) {
      const auto& raw = runs[{kind->baseline, size}];
      const auto& rs = runs[{kind->name, size}];
      std::vector<double> tp, p50, p99, p999, ratio, over;
      std::uint64_t lost = 0;
      for (std::size_t i = 0; i < rs.size(); ++i) {
        const Run& r = rs[i];
        tp.push_back(r.msgs_per_s), p50.push_back(r.p50_us), p99.push_back(r.p99_us), p999.push_back(r.p999_us);
        if (i < raw.size()) ratio.push_back(r.msgs_per_s / raw[i].msgs_per_s), over.push_back(r.p50_us - raw[i].p50_us);
        lost += r.lost;
      }
      nlohmann::json row = {{"workload", "nats-bridge"},
                            {"transport", kind->transport},
                            {"wait", kind->wait},
                            {"size", size},
                            {"name", kind->name},
                            {"latency", "one way"},
                            {"msgs_per_s", median_of(tp)},
                            {"msgs_per_s_runs", tp},
                            {"spread", {{"msgs_per_s", zipc::bench::spread_of(tp)}}},
                            {"oneway_p50_us", median_of(p50)},
                            {"oneway_p99_us", median_of(p99)},
                            {"oneway_p999_us", median_of(p999)},
                            {"lost", lost},
                            {"repetitions", reps},
                            // Its baseline is raw NATS (raw JetStream for the JetStream bridge),
                            // not a limit of this machine: zipc-bench keeps a row's own basis
                            // (apply_ratio) and adds no limit ratio.
                            {"baseline", kind->baseline},
                            {"ratio_basis", "ratio_to_baseline"}};
      std::string vs_raw = "-", over_raw = "-";
      if (!ratio.empty()) {
        const auto [rlo, rhi] = range(ratio);
        const auto [olo, ohi] = range(over);
        row["ratio_to_baseline"] = median_of(ratio);
        row["ratio_to_baseline_range"] = {rlo, rhi};
        if (kind->baseline == std::string_view("raw NATS")) row["ratio_to_raw_nats"] = median_of(ratio);
        row["p50_over_raw_us"] = median_of(over);
        row["p50_over_raw_us_range"] = {olo, ohi};
        row["p50_over_raw_us_each"] = over;
        char buf[96];
        std::snprintf(buf, sizeof buf, "%.2fx [%.2f-%.2f]", median_of(ratio), rlo, rhi);
        vs_raw = buf;
        std::snprintf(buf, sizeof buf, "%+.1f [%+.1f..%+.1f]", median_of(over), olo, ohi);
        over_raw = buf;
      }
      std::printf("| %s | %zu B | %.0f | %s | %s | %.1f | %.1f | %.1f | %s |\n", kind->name, size, median_of(tp),
                  vs_raw.c_str(), kind->baseline, median_of(p50), median_of(p99), median_of(p999), over_raw.c_str());
      rows.push_back(std::move(row));
    }
  }
  if (!json_out.empty()) std::ofstream(json_out) << rows.dump(2) << "\n";
  if (extra) std::ofstream(rows_out) << rows.dump(2) << "\n";
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  try {
    return run(argc, argv);
  } catch (const std::exception& e) {  // no nats-server, a bridge that did not start, ...
    std::fprintf(stderr, "zipc-bench-bridge: %s\n", e.what());
    return 1;
  }
}
