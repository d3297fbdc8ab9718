// zipc::Bridge: opens the local ends, connects (retrying with back-off), runs
// one worker per mapping direction.
#include <algorithm>
#include <fstream>
#include <memory>
#include <thread>
#include <vector>

#include "core_outbound.hpp"
#include "inbound.hpp"
#include "internal.hpp"
#include "link.hpp"
#include "read_loop.hpp"
#include "zipc/error.hpp"

namespace zipc {

using namespace std::chrono_literals;
using bridge_detail::MappingRuntime;

namespace bridge_detail {

std::uint64_t realtime_ns() noexcept {
  return static_cast<std::uint64_t>(
      std::chrono::duration_cast<std::chrono::nanoseconds>(std::chrono::system_clock::now().time_since_epoch())
          .count());
}

std::uint64_t monotonic_ns() noexcept {
  return static_cast<std::uint64_t>(
      std::chrono::duration_cast<std::chrono::nanoseconds>(std::chrono::steady_clock::now().time_since_epoch())
          .count());
}

namespace {
std::string file_safe(std::string s) {
  for (char& c : s)
    if (!(std::isalnum(static_cast<unsigned char>(c)) || c == '-' || c == '_')) c = '_';
  return s;
}
}  // namespace

void open_local(MappingRuntime& m) {
  m.origins.set_max(m.cfg.max_origins);
  if (!m.cfg.auth_key_file.empty()) {
    if (m.cfg.direction != BridgeDirection::inbound) m.sign_out = std::make_unique<Hmac>(m.cfg.auth_key_file);
    if (m.cfg.direction != BridgeDirection::outbound) m.check_in = std::make_unique<Hmac>(m.cfg.auth_key_file);
  }
  const bool out = m.cfg.direction != BridgeDirection::inbound;
  const bool in = m.cfg.direction != BridgeDirection::outbound;
  const std::string base = m.state_dir.empty() ? "" : m.state_dir + "/" + file_safe(m.host_id + "." + m.cfg.name);
  if (!base.empty() && out) m.out_state.open(base + ".out");
  if (!base.empty() && in && m.cfg.mode == BridgeMode::jetstream) m.in_state.open(base + ".in");
  std::optional<std::uint64_t> saved;
  std::uint64_t saved_skip = 0;
  if (m.out_state.is_open())
    if (auto r = m.out_state.read()) saved = (*r)[0], saved_skip = (*r)[1];
  if (m.cfg.kind == BridgeKind::topic) {
    TopicOptions opt;
    opt.capacity_bytes = m.cfg.topic_capacity_bytes;
    opt.max_message_size = m.cfg.max_message_size;
    opt.accept_existing = true;  // attach to the channel as its creator made it
    opt.wait = m.cfg.wait;       // the outbound reader's waiting (docs/guide/bridge.md)
    opt.publishers = m.cfg.direction == BridgeDirection::both ? Multiplicity::multi : Multiplicity::single;
    m.topic = m.cfg.create ? Topic::open_or_create(m.cfg.channel, opt) : Topic::open(m.cfg.channel, opt);
    if (out) {
      SubscribeOptions so{From::latest(), Delivery::reliable};
      if (saved) so.from = From::sequence(*saved);
      try {
        m.subscriber = m.topic.subscribe(so);
      } catch (const Error& e) {
        if (e.errc() != Errc::not_retained) throw;
        // The topic no longer holds where we stopped: what it dropped is lost, and counted.
        so.from = From::oldest();
        m.subscriber = m.topic.subscribe(so);
        if (m.subscriber.next_sequence() > *saved)
          m.counters.lost.fetch_add(m.subscriber.next_sequence() - *saved, std::memory_order_relaxed);
      }
    }
    if (out) m.start_position = m.subscriber.next_sequence();
    if (in) m.publisher = m.topic.publisher();
  } else {
    QueueOptions opt;
    opt.block_size = m.cfg.queue_block_size;
    opt.block_count = m.cfg.queue_block_count;
    opt.accept_existing = true;
    opt.wait = m.cfg.wait;
    const Role role = out ? Role::consumer : Role::producer;
    Queue q =
        m.cfg.create ? Queue::open_or_create(m.cfg.channel, opt, role) : Queue::open(m.cfg.channel, role, m.cfg.wait);
    (out ? m.queue_out : m.queue_in) = std::move(q);
    if (saved) m.out_next = *saved, m.out_skip = saved_skip;
  }
}

}  // namespace bridge_detail

namespace {
// Inbound-only core mappings read through a connection of their own, read
// by a ReadLoop (read_loop.hpp): one wake-up fewer per message than the
// client's reader and delivery threads. Mappings in both directions stay on
// the shared connection, whose no-echo option keeps their own publications
// from coming back.
bool reads_in_loop(const BridgeMapping& m) {
  return m.direction == BridgeDirection::inbound && m.mode == BridgeMode::core;
}
bool caller_driven(const BridgeConfig& c) {
  return c.threads == BridgeThreads::caller;
}
}  // namespace

struct Bridge::Impl {
  BridgeConfig config;
  std::unique_ptr<bridge_detail::Link> link;
  std::unique_ptr<bridge_detail::ReadLoop> read_loop;  // with in_link, when a mapping reads_in_loop
  std::unique_ptr<bridge_detail::Link> in_link;
  // The JetStream outbound mappings' connection (buffered writes: a write
  // per publish was most of their cost), when there are any.
  std::unique_ptr<bridge_detail::Link> js_link;
  std::vector<std::unique_ptr<MappingRuntime>> maps;
  std::atomic<bool> stop{false};
  std::atomic<bool> failed{false};
  std::atomic<bool> ready{false};
  std::thread control;
  bool started = false;
  // BridgeThreads::caller: the outbound pumps poll() drives, made by the
  // control thread once connected; published by pumps_ready.
  std::vector<std::unique_ptr<bridge_detail::CoreOutbound>> pumps;
  std::atomic<bool> pumps_ready{false};
  bool wakes_added = false;  // under poll_mu: the outbound channels are in the read loop's WaitSet
  std::mutex poll_mu;        // one poll() at a time; stop() takes it too
  // The totals of the mappings as stop() found them (stats() after a stop).
  std::vector<BridgeStats> final_stats;

  void run();
  std::size_t poll_once(std::chrono::nanoseconds timeout);
  bool connect(bridge_detail::Link& l);
  bool pause(std::chrono::milliseconds d) {
    for (auto t = 0ms; t < d && !stop.load(std::memory_order_relaxed); t += 10ms) std::this_thread::sleep_for(10ms);
    return !stop.load(std::memory_order_relaxed);
  }
};

namespace {
std::string default_host_id() {
  std::ifstream in("/proc/sys/kernel/hostname");
  std::string h;
  std::getline(in, h);
  return h.empty() ? "zipc-host" : h;
}
std::string durable_safe(std::string s) {
  for (char& c : s)
    if (c == '.' || c == '*' || c == '>' || c == ' ' || c == '/') c = '_';
  return s;
}
}  // namespace

Bridge::Bridge(BridgeConfig config) : impl_(std::make_unique<Impl>()) {
  if (config.host_id.empty()) config.host_id = default_host_id();
  for (auto& m : config.mappings) {
    if (m.name.empty()) m.name = m.channel;
    if (m.durable.empty()) m.durable = durable_safe(config.host_id + "_" + m.name);
  }
  validate(config);
  impl_->config = std::move(config);
}

Bridge::~Bridge() {
  stop();
}

void Bridge::start() {
  std::lock_guard poll_lock(impl_->poll_mu);  // a poll() from another thread sees all of start() or none
  if (impl_->started) return;
  impl_->final_stats.clear();
  const auto& c = impl_->config;
  try {
    for (const auto& mc : c.mappings) {
      auto m = std::make_unique<MappingRuntime>();
      m->cfg = mc;
      m->host_id = c.host_id;
      m->state_dir = c.state_dir;
      m->stop = &impl_->stop;
      m->caller = caller_driven(c);
      bridge_detail::open_local(*m);
      impl_->maps.push_back(std::move(m));
    }
  } catch (...) {
    impl_->maps.clear();
    throw;
  }
  impl_->link = std::make_unique<bridge_detail::Link>(c.nats, "zipc-bridge " + c.host_id);
  const bool inbound_loop = std::any_of(c.mappings.begin(), c.mappings.end(), reads_in_loop);
  if (inbound_loop || caller_driven(c)) {
    impl_->read_loop = std::make_unique<bridge_detail::ReadLoop>();
    if (!caller_driven(c)) impl_->read_loop->start();  // else poll() steps it
  }
  if (std::any_of(c.mappings.begin(), c.mappings.end(), [](const BridgeMapping& m) {
        return m.mode == BridgeMode::jetstream && m.direction != BridgeDirection::inbound;
      }))
    impl_->js_link = std::make_unique<bridge_detail::Link>(c.nats, "zipc-bridge " + c.host_id + " jetstream", nullptr,
                                                           /*buffered=*/true);
  if (inbound_loop)
    impl_->in_link =
        std::make_unique<bridge_detail::Link>(c.nats, "zipc-bridge " + c.host_id + " inbound", impl_->read_loop.get());
  impl_->started = true;
  impl_->control = std::thread([this] { impl_->run(); });
}

// Connects l, retrying with back-off; false when stopped or out of time
// (then failed is set).
bool Bridge::Impl::connect(bridge_detail::Link& l) {
  auto backoff = 100ms;
  const auto begin = std::chrono::steady_clock::now();
  for (;;) {
    std::string err = l.connect_once();
    if (err.empty()) break;
    l.set_error(err + "; retrying in " + std::to_string(backoff.count()) + " ms");
    const auto limit = config.nats.connect_timeout;
    if (limit.count() > 0 && std::chrono::steady_clock::now() - begin + backoff > limit) {
      l.set_error(err + "; gave up after " + std::to_string(limit.count()) + " ms");
      failed.store(true, std::memory_order_relaxed);
      return false;
    }
    if (!pause(backoff)) return false;
    backoff = std::min(backoff * 2, std::chrono::milliseconds(5000));
  }
  l.set_error("");
  return true;
}

void Bridge::Impl::run() {
  if (!connect(*link)) return;
  if (in_link && !connect(*in_link)) return;
  if (js_link && !connect(*js_link)) return;
  for (auto& m : maps) {
    if (m->cfg.mode != BridgeMode::jetstream) continue;
    for (auto wait = 100ms;;) {
      std::string err = link->ensure_stream(m->cfg.stream, m->cfg.subject);
      if (err.empty()) break;
      link->set_error(err + "; retrying");
      if (!pause(wait)) return;
      wait = std::min(wait * 2, std::chrono::milliseconds(2000));
    }
  }
  for (auto& mp : maps) {
    MappingRuntime& m = *mp;
    if (m.cfg.direction != BridgeDirection::inbound && caller_driven(config)) {
      pumps.push_back(std::make_unique<bridge_detail::CoreOutbound>(m, *link, stop, /*caller=*/true));
    } else if (m.cfg.direction != BridgeDirection::inbound) {
      bridge_detail::Link& l = m.cfg.mode == BridgeMode::jetstream ? *js_link : *link;
      m.out_thread = std::thread([this, &m, &l] { bridge_detail::run_outbound(m, l, stop); });
    }
    if (m.cfg.direction == BridgeDirection::outbound) continue;
    if (m.cfg.mode == BridgeMode::jetstream) {
      m.in_thread = std::thread([this, &m] { bridge_detail::run_inbound_jetstream(m, *link, stop); });
    } else {
      const bool own = reads_in_loop(m.cfg);
      bridge_detail::Link& l = own ? *in_link : *link;
      for (auto wait = 100ms;;) {
        std::string err = bridge_detail::start_inbound_core(m, l, own);
        if (err.empty()) break;
        l.set_error(err + "; retrying");
        if (!pause(wait)) return;
      }
      if (own) read_loop->add(&m);
    }
  }
  pumps_ready.store(true, std::memory_order_release);  // release: pumps are complete (poll() acquires)
  ready.store(true, std::memory_order_relaxed);
}

std::size_t Bridge::Impl::poll_once(std::chrono::nanoseconds timeout) {
  std::uint64_t received = 0;
  for (auto& m : maps) received += m->counters.received.load(std::memory_order_relaxed);
  std::size_t moved = 0;
  const bool pumping = wakes_added;  // the pumps are made (and their channels wake the loop's waits)
  if (pumping)
    for (auto& p : pumps) moved += p->pump(std::chrono::nanoseconds(0));
  const bool wait = moved == 0 && timeout.count() > 0;
  // The socket is read on every poll; with no inbound mapping the loop's
  // WaitSet is only for waiting.
  if (in_link || wait || !pumping) read_loop->step(wait ? timeout : std::chrono::nanoseconds(0));
  if (wait && pumping)  // the wait may have ended for a local channel
    for (auto& p : pumps) moved += p->pump(std::chrono::nanoseconds(0));
  std::uint64_t received_after = 0;
  for (auto& m : maps) received_after += m->counters.received.load(std::memory_order_relaxed);
  return moved + static_cast<std::size_t>(received_after - received);
}

std::size_t Bridge::poll(std::chrono::nanoseconds timeout) {
  if (!caller_driven(impl_->config))
    throw Error(Errc::invalid_argument,
                "Bridge::poll: this bridge moves messages in threads of its own (BridgeConfig::threads is own)");
  std::lock_guard lock(impl_->poll_mu);
  if (!impl_->started) {  // (or stopped): nothing to move; the caller's loop goes on
    std::this_thread::sleep_for(std::min(timeout, std::chrono::nanoseconds(10ms)));
    return 0;
  }
  // Before the mappings run, polls still step the inbound connection: its
  // handshake (the subscriptions, the flush that confirms them) is written
  // and read only here.
  if (!impl_->wakes_added && impl_->pumps_ready.load(std::memory_order_acquire)) {
    for (auto& p : impl_->pumps) {  // from the polling thread, as the WaitSet wants
      MappingRuntime& m = p->mapping();
      if (m.cfg.kind == BridgeKind::topic)
        impl_->read_loop->add_wake(m.subscriber);
      else
        impl_->read_loop->add_wake(m.queue_out);
    }
    impl_->wakes_added = true;
  }
  return impl_->poll_once(timeout);
}

void Bridge::stop() noexcept {
  if (!impl_ || !impl_->started) return;
  impl_->stop.store(true, std::memory_order_relaxed);
  if (impl_->read_loop) impl_->read_loop->stop();  // ends a poll()'s wait too
  if (impl_->control.joinable()) impl_->control.join();
  std::unique_lock poll_lock(impl_->poll_mu);  // no poll() from here on
  for (auto& p : impl_->pumps) p->finish();
  impl_->pumps.clear();
  impl_->pumps_ready.store(false, std::memory_order_relaxed);
  impl_->wakes_added = false;
  for (auto& m : impl_->maps) {
    if (m->core_sub != nullptr) {
      if (reads_in_loop(m->cfg)) {
        impl_->read_loop->remove(m.get());  // the loop no longer takes from it
        natsSubscription_Unsubscribe(m->core_sub);
      } else if (natsSubscription_Drain(m->core_sub) == NATS_OK) {
        natsSubscription_WaitForDrainCompletion(m->core_sub, 2000);
      }
      natsSubscription_Destroy(m->core_sub);
      m->core_sub = nullptr;
    }
    if (m->out_thread.joinable()) m->out_thread.join();
    if (m->in_thread.joinable()) m->in_thread.join();
    bridge_detail::drop_held(*m);
  }
  if (impl_->link) {
    if (impl_->link->conn() != nullptr) natsConnection_FlushTimeout(impl_->link->conn(), 1000);
    impl_->link->close();
  }
  if (impl_->in_link) impl_->in_link->close();
  if (impl_->js_link) {
    impl_->js_link->flush(std::chrono::milliseconds(1000));  // the last acks
    impl_->js_link->close();
  }
  impl_->final_stats.clear();
  for (std::size_t i = 0; i < impl_->maps.size(); ++i) impl_->final_stats.push_back(stats(i));
  impl_->in_link.reset();
  impl_->js_link.reset();
  impl_->read_loop.reset();
  impl_->maps.clear();
  impl_->started = false;
  impl_->ready.store(false, std::memory_order_relaxed);
  impl_->stop.store(false, std::memory_order_relaxed);
}

bool Bridge::connected() const noexcept {
  return impl_->link && impl_->link->up() && (!impl_->in_link || impl_->in_link->up()) &&
         (!impl_->js_link || impl_->js_link->up());
}
bool Bridge::ready() const noexcept {
  return impl_->ready.load(std::memory_order_relaxed) && connected();
}
bool Bridge::failed() const noexcept {
  return impl_->failed.load(std::memory_order_relaxed);
}
std::string Bridge::last_error() const {
  std::string e = impl_->link ? impl_->link->last_error() : std::string();
  if (e.empty() && impl_->in_link) e = impl_->in_link->last_error();
  if (e.empty() && impl_->js_link) e = impl_->js_link->last_error();
  return e;
}
std::size_t Bridge::mapping_count() const noexcept {
  return impl_->config.mappings.size();
}
const BridgeConfig& Bridge::config() const noexcept {
  return impl_->config;
}

BridgeStats Bridge::stats(std::size_t mapping) const {
  BridgeStats s;
  if (impl_->maps.empty() && mapping < impl_->final_stats.size()) return impl_->final_stats[mapping];
  if (mapping >= impl_->maps.size()) return s;
  const auto& c = impl_->maps[mapping]->counters;
  s.forwarded = c.forwarded.load(std::memory_order_relaxed);
  s.received = c.received.load(std::memory_order_relaxed);
  s.lost = c.lost.load(std::memory_order_relaxed);
  s.duplicates = c.duplicates.load(std::memory_order_relaxed);
  s.loops = c.loops.load(std::memory_order_relaxed);
  s.errors = c.errors.load(std::memory_order_relaxed);
  s.rejected_status = c.rejected_status.load(std::memory_order_relaxed);
  s.rejected_header = c.rejected_header.load(std::memory_order_relaxed);
  s.rejected_frame = c.rejected_frame.load(std::memory_order_relaxed);
  s.rejected_size = c.rejected_size.load(std::memory_order_relaxed);
  s.rejected_auth = c.rejected_auth.load(std::memory_order_relaxed);
  s.epochs = c.epochs.load(std::memory_order_relaxed);
  s.evicted = c.evicted.load(std::memory_order_relaxed);
  for (const auto* l : {impl_->link.get(), impl_->in_link.get(), impl_->js_link.get()})
    s.reconnects += l != nullptr ? l->reconnects() : 0;
  const auto& m = *impl_->maps[mapping];
  if (m.cfg.kind == BridgeKind::topic && m.cfg.direction != BridgeDirection::inbound) {
    const std::uint64_t next = m.topic.next_sequence();
    const std::uint64_t sent = std::max(c.out_position.load(std::memory_order_relaxed), m.start_position);
    s.lag = next > sent ? next - sent : 0;
  }
  return s;
}

}  // namespace zipc
