// RpcServer: create, scan for requests, serve, recover dead clients.
#include <fcntl.h>
#include <algorithm>

#include <cerrno>
#include <cstring>
#include <thread>
#include <vector>

#include "core/fail.hpp"
#include "core/recovery_wait.hpp"
#include "layout/rpc_layout.hpp"
#include "platform/clock.hpp"
#include "platform/file.hpp"
#include "platform/file_identity.hpp"
#include "rpc/rpc_server_impl.hpp"
#include "rpc/rpc_shared.hpp"
#include "segment/segment_header.hpp"
#include "zipc/log.hpp"
#include "zipc/process.hpp"
#include "zipc/rpc.hpp"

namespace zipc {
namespace detail {
namespace {

constexpr std::uint64_t kAutoBlockBudget = std::uint64_t{256} << 20;

SegmentSpec make_spec(std::string_view name, const RpcOptions& o, layout::RpcGeometry* g) {
  if (o.max_clients == 0 || o.max_clients > layout::kRpcMaxClients) {
    fail(Errc::invalid_argument, "rpc", name, "max_clients must be 1.." + std::to_string(layout::kRpcMaxClients));
  }
  if (o.inflight_per_client == 0 || o.inflight_per_client > layout::kRpcMaxSlots) {
    fail(Errc::invalid_argument, "rpc", name, "inflight_per_client must be 1.." + std::to_string(layout::kRpcMaxSlots));
  }
  if (o.max_request_size > layout::kRpcMaxMessage || o.max_response_size > layout::kRpcMaxMessage) {
    fail(Errc::invalid_argument, "rpc", name, "max_request_size / max_response_size over 1 TiB");
  }
  if (o.inline_size > (1u << 24)) fail(Errc::invalid_argument, "rpc", name, "inline_size over 16 MiB");
  if (o.recovery_time.count() <= 0) {
    fail(Errc::invalid_argument, "rpc", name, "recovery_time must be positive");
  }
  if (!o.segment.path.empty()) {
    fail(Errc::invalid_argument, "rpc", name,
         "segment.path is not supported: clients find a service by name in /dev/shm");
  }
  std::uint64_t p[8] = {};
  p[0] = o.max_clients;
  p[1] = o.inflight_per_client;
  p[2] = o.max_request_size;
  p[3] = o.max_response_size;
  p[4] = std::min<std::uint64_t>(o.inline_size, o.max_request_size);
  p[5] = std::min<std::uint64_t>(o.inline_size, o.max_response_size);
  const bool need_blocks = p[2] > p[4] || p[3] > p[5];
  std::uint64_t block_size = 0, blocks = 0;
  if (need_blocks) {
    block_size = layout::rpc_round(std::max(p[2], p[3]), 4096);
    if (o.large_blocks != 0) {
      blocks = o.large_blocks;
    } else {
      const std::uint64_t slots = std::uint64_t{o.max_clients} * o.inflight_per_client;
      // A request block and a response block per slot, within the budget.
      blocks = std::max<std::uint64_t>(2, std::min(2 * slots, kAutoBlockBudget / block_size));
    }
  }
  p[6] = blocks;
  p[7] = block_size | (std::uint64_t{static_cast<std::uint8_t>(o.wait.strategy)} << 56);
  if (!layout::rpc_geometry(p, g)) fail(Errc::invalid_argument, "rpc", name, "the options give an impossible layout");
  SegmentSpec spec;
  spec.kind = SegmentKind::rpc;
  spec.payload_size = g->total;
  // The room check covers what create commits: the fixed part and the
  // initial blocks; the rest of the pool is committed as calls need it.
  // (prefault: everything, now.)
  if (!o.segment.prefault) spec.committed_size = layout::rpc_committed_bytes(*g, layout::rpc_initial_blocks(*g));
  for (int i = 0; i < 8; ++i) spec.params[static_cast<std::size_t>(i)] = p[i];
  return spec;
}

// A kind or version field that reads wrong is damage (not another kind of
// segment, nor a newer layout) only when the header's checksum fails too.
bool checksum_broken(const std::string& path) {
  const int fd = platform::open_file(path, O_RDONLY, 0);
  if (fd < 0) return false;
  layout::SegmentHeader h;
  const long n = platform::read_at(fd, &h, sizeof h, 0);
  platform::close_fd(fd);
  return n == static_cast<long>(sizeof h) && header_checksum(h) != h.checksum;
}

// A segment whose header cannot be read: its server is proved gone when no
// process holds a lock on the file (a live server holds a shared one for
// its whole life, a creator an exclusive one while initializing).
bool damaged_and_unlocked(const std::string& path) {
  const int fd = platform::open_file(path, O_RDONLY, 0);
  if (fd < 0) return fd == -ENOENT;
  const bool free = platform::lock_fd(fd, /*exclusive=*/true, /*nonblocking=*/true) == 0;
  platform::close_fd(fd);  // (drops the probe lock)
  return free;
}

// True when name holds an rpc segment whose server is gone (or whose creator
// died while initializing it): it may be replaced. A segment whose header is
// damaged is replaced only when no live server holds it (see above); else
// the error says so and how to clear it.
bool is_stale(std::string_view name, const std::string& path) {
  try {
    SegmentOptions so;
    so.open_timeout = std::chrono::milliseconds(100);
    Segment s = Segment::open(name, SegmentKind::rpc, so);
    layout::RpcGeometry g;
    if (!rpc_geometry_from_params(s.params(), s.payload_size(), &g)) return !is_alive(s.creator());
    RpcView v(s.payload(), g);
    // acquire: pairs with the creator's init (published by init_state).
    return !rpc_alive(v.control()->server.load(std::memory_order_acquire));
  } catch (const Error& e) {
    if (e.errc() == Errc::creator_died || e.errc() == Errc::not_found) return true;
    // Only a damaged header is judged by the lock: another kind of segment
    // under this name (wrong_kind), a newer layout, or a permission problem
    // is never removed (its users hold no lock).
    const bool suspect = e.errc() == Errc::wrong_kind || e.errc() == Errc::version_mismatch;
    const bool damaged = e.errc() == Errc::corrupt_header || e.errc() == Errc::bad_magic ||
                         e.errc() == Errc::truncated || (suspect && checksum_broken(path));
    if (!damaged) return false;
    if (damaged_and_unlocked(path)) return true;
    fail(Errc::already_exists, "rpc", name,
         std::string("the existing segment is damaged (") + e.what() +
             ") and a process still holds it as its server; stop that process, or remove the segment with `zipc rm " +
             std::string(name) + "`");
  }
}

// One attempt to take a name over from a dead server: pins the file at path,
// judges it, and removes it only if path still names that same file.
// The caller then tries to create again; throws when a live server has the name.
void replace_stale(std::string_view name, const std::string& path) {
  platform::HeldFile old;
  if (int r = old.open(path); r < 0) {
    if (r == -ENOENT) return;  // gone already
    fail(Errc::already_exists, "rpc", name, "cannot open the existing segment: " + platform::error_text(-r));
  }
  // is_stale judges the file the name holds now; if that is still `old` when
  // we remove it, it was `old` all along (a held inode cannot come back to
  // the name once unlinked).
  if (!is_stale(name, path)) fail(Errc::already_exists, "rpc", name, "a live server already serves this name");
  // -ESTALE / -ENOENT: another server replaced it first: judge its file.
  if (old.unlink_if_still_at(path) == -EWOULDBLOCK) platform::sleep_ns(1'000'000);
}

}  // namespace

ServerLiveLock::~ServerLiveLock() {
  release();
}

void ServerLiveLock::release() noexcept {
  if (fd >= 0) platform::close_fd(fd);
  fd = -1;
}

void ServerLiveLock::take(const std::string& path) noexcept {
  const int f = platform::open_file(path, O_RDONLY, 0);
  if (f < 0) return;  // no proof then: a damaged header of ours reads as live
  if (platform::lock_fd(f, /*exclusive=*/false, /*nonblocking=*/false) != 0) {
    platform::close_fd(f);
    return;
  }
  fd = f;
}

bool rpc_geometry_from_params(const std::array<std::uint64_t, 8>& params, std::size_t payload_size,
                              layout::RpcGeometry* g) noexcept {
  std::uint64_t p[8];
  for (std::size_t i = 0; i < 8; ++i) p[i] = params[i];
  if (!layout::rpc_geometry(p, g)) return false;
  return g->total <= payload_size;
}

bool rpc_alive(std::uint64_t packed) noexcept {
  return packed > layout::kOwnerReaping && is_alive_packed(packed);
}

bool RpcServerImpl::try_claim(RpcRequest& out) noexcept {
  const layout::RpcGeometry& g = view.geometry();
  const std::uint64_t clients = g.max_clients;
  const std::uint64_t k_per = g.slots_per_client;
  // relaxed: only spreads the threads over the clients; written once per
  // claimed request below, not on every poll of an idle server.
  const std::uint64_t start = scan_start.load(std::memory_order_relaxed);
  for (std::uint64_t i = 0; i < clients; ++i) {
    const std::uint64_t c = (start + i) % clients;
    // relaxed: a filter; the slot state's acquire below orders the request.
    if (view.record(c)->owner.load(std::memory_order_relaxed) <= layout::kOwnerReaping) continue;
    for (std::uint64_t k = 0; k < k_per; ++k) {
      const std::uint64_t gi = c * k_per + k;
      layout::RpcSlot* s = view.slot(gi);
      // relaxed: a filter before the claiming CAS.
      if (s->state.load(std::memory_order_relaxed) != layout::kSlotRequest) continue;
      std::uint32_t expected = layout::kSlotRequest;
      // acquire: pairs with the client's release store of kSlotRequest, so its
      // request fields and payload are visible; exactly one thread wins.
      if (!s->state.compare_exchange_strong(expected, layout::kSlotClaimed, std::memory_order_acquire,
                                            std::memory_order_relaxed)) {
        continue;
      }
      // Each field read once into a local, then validated (a hostile client
      // may change the slot under us).
      // relaxed (all four): ordered by the acquire CAS above.
      const std::uint64_t call_id = s->call_id.load(std::memory_order_relaxed);
      const std::uint64_t len = s->req_len.load(std::memory_order_relaxed);
      const std::uint32_t block = s->req_block.load(std::memory_order_relaxed);
      RpcRequest r;
      r.server_ = this;
      r.client_ = static_cast<std::uint32_t>(c);
      r.slot_ = static_cast<std::uint32_t>(gi);
      r.call_id_ = call_id;
      r.status_ = Status::ok;
      bool valid = len <= g.max_request;
      if (valid && len <= g.req_inline) {
        r.data_ = view.request_inline(gi);
      } else if (valid && block < g.block_count && len <= g.block_size &&
                 // relaxed: the state CAS's acquire orders the client's block claim before this.
                 view.block_owner(block)->load(std::memory_order_relaxed) == c + 1 && pool.usable(block)) {
        // (A block the client does not hold is another client's data, or free,
        // and one above the pool's watermark has no memory: corrupt.)
        r.req_block_ = block;
        r.data_ = view.block(block);
      } else {
        valid = false;
      }
      r.size_ = valid ? static_cast<std::size_t>(len) : 0;
      if (!valid) {
        publish(r, layout::kResultCorrupt, 0, layout::kNoBlock);
        r.server_ = nullptr;
        continue;
      }
      scan_start.store(c + 1, std::memory_order_relaxed);  // relaxed: as above; the next scan starts after us
      out = std::move(r);
      return true;
    }
  }
  return false;
}

void RpcServerImpl::publish(RpcRequest& req, std::uint32_t result, std::uint64_t len, std::uint32_t block) noexcept {
  layout::RpcSlot* s = view.slot(req.slot_);
  // relaxed (all four): published by the release store of state below.
  s->resp_len.store(len, std::memory_order_relaxed);
  s->resp_block.store(block, std::memory_order_relaxed);
  s->reply_call_id.store(req.call_id_, std::memory_order_relaxed);
  s->result.store(result, std::memory_order_relaxed);
  if (req.req_block_ != layout::kNoBlock) view.release_block(req.req_block_, req.client_);
  req.req_block_ = layout::kNoBlock;
  // release: publishes the response fields and payload to the client, which
  // loads state with acquire.
  s->state.store(layout::kSlotResponse, std::memory_order_release);
  view.record(req.client_)->response_event.notify_all();
}

RpcRequest RpcServerImpl::next(Deadline deadline) noexcept {
  RpcRequest out;
  bool got = false;
  // Claims at most one request: the wait's predicate and the helper's own
  // attempt after it both call this, and a second claim would overwrite (and
  // lose) the first.
  const auto attempt = [&]() noexcept {
    if (got || stopping.load(std::memory_order_relaxed)) return true;
    got = try_claim(out);
    return got;
  };
  // Dead clients are reaped before we look for work (their requests are
  // dropped unserved), then every reap_interval while we wait: the one
  // recovery-sliced wait, on the server's reap schedule.
  maybe_reap(platform::monotonic_ns());  // (returns at once unless due)
  if (!attempt()) {
    (void)periodic_recovery_wait(
        deadline, attempt, [&]() noexcept { return next_reap_ns.load(std::memory_order_relaxed); },
        [&](Deadline d) noexcept { return view.control()->server_event.wait_until(attempt, d, options.wait); },
        [&](std::uint64_t now) noexcept {
          maybe_reap(now);
          return false;
        });
  }
  if (got) return out;
  out.status_ = stopping.load(std::memory_order_relaxed) ? Status::closed : Status::timeout;
  return out;
}

void RpcServerImpl::maybe_reap(std::uint64_t now) noexcept {
  if (now < next_reap_ns.load(std::memory_order_relaxed)) return;
  std::unique_lock<std::mutex> lock(reap_mutex, std::try_to_lock);
  if (!lock.owns_lock()) return;
  const auto interval =
      static_cast<std::uint64_t>(std::chrono::duration_cast<std::chrono::nanoseconds>(options.recovery_time).count());
  bool retry_soon = false;
  const layout::RpcGeometry& g = view.geometry();
  for (std::uint64_t c = 0; c < g.max_clients; ++c) {
    auto& owner = view.record(c)->owner;
    // acquire: pairs with the client's CAS/store of owner; we then look at its slots.
    std::uint64_t w = owner.load(std::memory_order_acquire);
    if (w == layout::kOwnerFree) continue;
    if (w != layout::kOwnerReaping) {
      if (w != layout::kOwnerDetached && rpc_alive(w)) continue;
      // acq_rel: claims the record for recovery against a client detaching at once.
      if (!owner.compare_exchange_strong(w, layout::kOwnerReaping, std::memory_order_acq_rel)) continue;
    }
    if (!finish_reap(static_cast<std::uint32_t>(c))) retry_soon = true;
  }
  next_reap_ns.store(platform::monotonic_ns() + (retry_soon ? std::min<std::uint64_t>(interval, 5'000'000) : interval),
                     std::memory_order_relaxed);
}

bool RpcServerImpl::finish_reap(std::uint32_t client) noexcept {
  const layout::RpcGeometry& g = view.geometry();
  bool busy = false;
  for (std::uint64_t k = 0; k < g.slots_per_client; ++k) {
    layout::RpcSlot* s = view.slot(client * g.slots_per_client + k);
    // acquire: a claimed slot's handler may still be running; see its state.
    std::uint32_t st = s->state.load(std::memory_order_acquire);
    if (st == layout::kSlotRequest) {
      // acq_rel: races with a server thread claiming it; one wins.
      if (s->state.compare_exchange_strong(st, layout::kSlotFree, std::memory_order_acq_rel)) continue;
    }
    if (st == layout::kSlotClaimed) {
      busy = true;
      continue;
    }
    // relaxed: nobody else acts on a free or answered slot of a dead client.
    s->state.store(layout::kSlotFree, std::memory_order_relaxed);
  }
  if (busy) return false;
  for (std::uint64_t b = 0; b < g.block_count; ++b) view.release_block(static_cast<std::uint32_t>(b), client);
  reaped.fetch_add(1, std::memory_order_relaxed);
  // release: the freed slots and blocks happen before the next client's claim
  // (its acquire CAS on owner).
  view.record(client)->owner.store(layout::kOwnerFree, std::memory_order_release);
  detail::log_message(LogLevel::info, name,
                      "reaped dead client " + std::to_string(client) + " (slots and blocks freed)");
  return true;
}

void RpcServerImpl::close() noexcept {
  if (closed.exchange(true, std::memory_order_relaxed)) return;
  stopping.store(true, std::memory_order_relaxed);
  if (!segment) return;
  // release: clients that see closed also see every response published before.
  view.control()->state.store(layout::kRpcClosed, std::memory_order_release);
  view.control()->server_event.notify_all();
  for (std::uint64_t c = 0; c < view.geometry().max_clients; ++c) view.record(c)->response_event.notify_all();
  if (!path.empty()) rpc_unregister_local(path, segment.get());  // keyed by path: the name space is part of it
  // Only our own file: if the name was taken from us (an outsider removed it,
  // a successor now serves there), the successor's file stays (review
  // finding 12). Our mapping keeps our inode alive, so no successor can have
  // our identity. Our live lock goes first (the removal takes an exclusive one).
  live_lock.release();
  if (!file_known) return;
  for (int i = 0; i < 100; ++i) {
    if (platform::unlink_if_same(path, file) != -EWOULDBLOCK) return;
    platform::sleep_ns(1'000'000);  // a remover by identity checks our file just now
  }
}

}  // namespace detail

RpcServer RpcServer::create(std::string_view name, const RpcOptions& options) {
  Segment::validate_name(name);
  layout::RpcGeometry g;
  const SegmentSpec spec = detail::make_spec(name, options, &g);
  const SegmentOptions& so = options.segment;
  const std::uint64_t me = pack(ProcessId::current());
  auto init = [&](std::byte* payload, std::size_t) {
    // The file is zero-filled: records free, slots free, owners free, blocks
    // free. Only the control line is written: the slots, the owners and the
    // blocks stay untouched (not resident) until used; a client sets up its
    // own slots when it connects (docs/guide/rpc.md, "Memory").
    detail::RpcView v(payload, g);
    v.control()->rpc_magic = layout::kRpcMagic;
    v.control()->layout_version = layout::kRpcLayoutVersion;                   // published by init_state
    v.control()->server.store(me, std::memory_order_relaxed);                  // relaxed: published by init_state
    v.control()->state.store(layout::kRpcRunning, std::memory_order_relaxed);  // relaxed: as above
    const std::uint64_t committed = so.prefault ? g.block_count : layout::rpc_initial_blocks(g);
    v.control()->blocks_committed.store(static_cast<std::uint32_t>(committed),
                                        std::memory_order_relaxed);  // relaxed: as above
  };
  RpcServer s;
  if (so.memfd) {
    // No name in /dev/shm: nothing to take over, nothing to remove; clients
    // come through fd() (zipc::send_fd) and RpcClient::connect_fd.
    s.impl_->segment = std::make_shared<Segment>(Segment::create(name, spec, init, so));
  } else {
    const std::string path = Segment::path_for(name, so);
    Segment seg;
    for (int attempt = 0;; ++attempt) {
      try {
        seg = Segment::create(name, spec, init, so);
        break;
      } catch (const Error& e) {
        if (e.errc() != Errc::already_exists || !options.replace_stale || attempt >= 100) throw;
      }
      detail::replace_stale(name, path);
    }
    // Nobody replaces a live server's file, so what path names now is ours.
    s.impl_->path = path;
    s.impl_->file_known = platform::file_id(path, &s.impl_->file) == 0;
    s.impl_->live_lock.take(path);
    s.impl_->segment = std::make_shared<Segment>(std::move(seg));
    detail::rpc_register_local(path, s.impl_->segment);
  }
  s.impl_->view = detail::RpcView(s.impl_->segment->payload(), g);
  s.impl_->pool.attach(s.impl_->segment.get(), s.impl_->view, std::string(name));
  s.impl_->options = options;
  s.impl_->name = std::string(name);
  return s;
}

RpcServer::RpcServer() : impl_(std::make_unique<detail::RpcServerImpl>()) {}
RpcServer::RpcServer(RpcServer&&) noexcept = default;
RpcServer& RpcServer::operator=(RpcServer&& o) noexcept {
  if (this != &o) {
    if (impl_) impl_->close();
    impl_ = std::move(o.impl_);
  }
  return *this;
}
RpcServer::~RpcServer() {
  if (impl_) impl_->close();
}

void RpcServer::serve(const Handler& handler, unsigned threads) {
  if (impl_ && impl_->closed.load(std::memory_order_relaxed))
    fail(Errc::closed, "rpc", impl_->name, "serve() after close()");
  if (!impl_ || !impl_->segment) {
    throw Error(Errc::invalid_argument, "rpc: serve() on a server that holds nothing (not created or moved from)");
  }
  if (threads == 0 || threads > kRpcMaxServeThreads) {
    fail(Errc::invalid_argument, "rpc", impl_->name,
         "serve: threads must be 1.." + std::to_string(kRpcMaxServeThreads) + ", got " + std::to_string(threads));
  }
  detail::RpcServerImpl* impl = impl_.get();
  auto loop = [impl, &handler] {
    while (!impl->stopping.load(std::memory_order_relaxed)) {
      RpcRequest req = impl->next(Deadline::after(std::chrono::milliseconds(100)));
      if (!req.ok()) continue;
      try {
        handler(req);
      } catch (...) {
        detail::rpc_fail_current_exception(req, impl->name);  // (a no-op when the handler answered first)
      }
    }
  };
  std::vector<std::thread> pool;
  for (unsigned i = 1; i < threads; ++i) pool.emplace_back(loop);
  loop();
  for (auto& t : pool) t.join();
}

RpcRequest RpcServer::next(std::chrono::nanoseconds timeout) noexcept {
  if (impl_ && impl_->closed.load(std::memory_order_relaxed)) return RpcRequest();  // closed
  if (!impl_ || !impl_->segment) return detail::RpcServerImpl::detached_request();
  return impl_->next(Deadline::after(timeout));
}

void RpcServer::stop() noexcept {
  if (!impl_) return;
  impl_->stopping.store(true, std::memory_order_relaxed);
  if (impl_->segment) impl_->view.control()->server_event.notify_all();
}

void RpcServer::close() noexcept {
  if (impl_) impl_->close();
}

const std::string& RpcServer::name() const noexcept {
  static const std::string none;
  return impl_ ? impl_->name : none;
}

int RpcServer::fd() const noexcept {
  return impl_ && impl_->segment ? impl_->segment->fd() : -1;
}

std::size_t RpcServer::connected_clients() const noexcept {
  std::size_t n = 0;
  if (!impl_ || !impl_->segment) return 0;
  for (std::uint64_t c = 0; c < impl_->view.geometry().max_clients; ++c) {
    // relaxed: a snapshot for diagnostics.
    if (impl_->view.record(c)->owner.load(std::memory_order_relaxed) > layout::kOwnerReaping) ++n;
  }
  return n;
}

std::uint64_t RpcServer::reaped_clients() const noexcept {
  return impl_ ? impl_->reaped.load(std::memory_order_relaxed) : 0;
}

}  // namespace zipc
