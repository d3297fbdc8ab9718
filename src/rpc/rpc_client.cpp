// RpcClient: connect, reserve, send, wait, reconnect.
#include <cstring>
#include <new>
#include <thread>
#include <utility>

#include "core/fail.hpp"
#include "core/recovery_wait.hpp"
#include "layout/rpc_layout.hpp"
#include "platform/clock.hpp"
#include "rpc/rpc_client_impl.hpp"
#include "zipc/process.hpp"
#include "zipc/rpc.hpp"

namespace zipc {
namespace detail {
namespace {

// Why a call on a connection that saw its server go away fails.
Status closed_or_dead(const RpcConnection& c) noexcept {
  // relaxed: a one-shot flag; the state itself carries no data to us.
  return c.view.control()->state.load(std::memory_order_relaxed) == layout::kRpcClosed ? Status::closed
                                                                                       : Status::peer_dead;
}

// zipc top's counters in our own record: one client thread writes them
// (relaxed load + store, no RMW); the owner CAS at connect hands them over.
void count_call(RpcConnection& c, std::uint64_t bytes) noexcept {
  layout::RpcClientRecord* r = c.view.record(c.client);
  r->calls.store(r->calls.load(std::memory_order_relaxed) + 1, std::memory_order_relaxed);  // relaxed: statistics
  r->request_bytes.store(r->request_bytes.load(std::memory_order_relaxed) + bytes,
                         std::memory_order_relaxed);  // relaxed: statistics
}
void count_error(RpcConnection& c) noexcept {
  layout::RpcClientRecord* r = c.view.record(c.client);
  r->errors.store(r->errors.load(std::memory_order_relaxed) + 1, std::memory_order_relaxed);  // relaxed: statistics
}
}  // namespace

RpcConnection::~RpcConnection() {
  if (!segment) return;
  bool pending = false;
  for (std::uint32_t k = 0; k < local.size(); ++k) {
    if (!reclaim(k)) {
      pending = true;  // a server thread has it: the server frees it once we are detached
      continue;
    }
    // Set only while an RpcResponse holds the slot, and a response keeps the
    // connection alive: never set here, freed for robustness.
    if (resp_block[k] != layout::kNoBlock) view.release_block(resp_block[k], client);
    resp_block[k] = layout::kNoBlock;
  }
  // release: our last accesses to slots and blocks happen before the server's
  // recovery or the next client's claim (both acquire owner).
  view.record(client)->owner.store(pending ? layout::kOwnerDetached : layout::kOwnerFree, std::memory_order_release);
  if (pending) view.control()->server_event.notify_one();
}

bool RpcConnection::reclaim(std::uint32_t k) noexcept {
  layout::RpcSlot* s = slot(k);
  // acquire: pairs with the server's release of kSlotResponse (block index).
  std::uint32_t st = s->state.load(std::memory_order_acquire);
  if (st == layout::kSlotRequest) {
    // acq_rel: races with a server thread claiming it; one wins.
    if (!s->state.compare_exchange_strong(st, layout::kSlotFree, std::memory_order_acq_rel)) return false;
    // Ours to free only now: once a server thread claims the request, it gives
    // the block back with (or turns it into) the response, and req_block[k]
    // is a stale index that another call of ours may hold by then (review
    // finding 11).
    if (req_block[k] != layout::kNoBlock) view.release_block(req_block[k], client);
  } else if (st == layout::kSlotResponse) {
    view.release_block(s->resp_block.load(std::memory_order_relaxed), client);  // relaxed: after acquire
    s->state.store(layout::kSlotFree, std::memory_order_relaxed);               // relaxed: only we act on a free slot
  } else if (st != layout::kSlotFree) {
    return false;  // still being served
  }
  req_block[k] = layout::kNoBlock;
  local[k] = LocalSlot::free;
  return true;
}

void RpcConnection::release(std::uint32_t k) noexcept {
  if (resp_block[k] != layout::kNoBlock) view.release_block(resp_block[k], client);
  resp_block[k] = layout::kNoBlock;
  // relaxed: the server touches the slot again only after our next request's
  // release store, which orders these reads before it.
  slot(k)->state.store(layout::kSlotFree, std::memory_order_relaxed);
  local[k] = LocalSlot::free;
}

std::shared_ptr<RpcConnection> RpcClientImpl::open(std::string_view name, Deadline deadline, int fd) {
  if (fd < 0) Segment::validate_name(name);
  const std::uint64_t me = pack(ProcessId::current());
  for (;;) {
    Errc why = Errc::ok;
    std::string text;
    try {
      SegmentOptions so;
      const std::uint64_t now = platform::monotonic_ns();
      so.open_timeout = std::chrono::milliseconds(
          deadline.is_never() ? 1000 : (deadline.ns() > now ? (deadline.ns() - now) / 1'000'000 : 0));
      std::shared_ptr<Segment> seg;
      if (fd >= 0) {
        seg = std::make_shared<Segment>(Segment::open_fd(fd, SegmentKind::rpc, so, name));
      } else {
        seg = rpc_find_local(Segment::path_for(name, so));
        if (!seg) seg = std::make_shared<Segment>(Segment::open(name, SegmentKind::rpc, so));
      }
      // The layout version first: another version may lay out the params differently.
      if (seg->payload_size() >= sizeof(layout::RpcControl)) {
        const auto* control = reinterpret_cast<const layout::RpcControl*>(seg->payload());
        if (control->rpc_magic == layout::kRpcMagic && control->layout_version != layout::kRpcLayoutVersion) {
          fail(Errc::version_mismatch, "rpc", name,
               "created by rpc layout version " + std::to_string(control->layout_version) +
                   ", this library reads version " + std::to_string(layout::kRpcLayoutVersion));
        }
      }
      auto c = std::make_shared<RpcConnection>();
      layout::RpcGeometry g;
      if (!rpc_geometry_from_params(seg->params(), seg->payload_size(), &g)) {
        fail(Errc::corrupt, "rpc", name, "layout parameters do not fit the segment");
      }
      c->view = RpcView(seg->payload(), g);
      if (c->view.control()->rpc_magic != layout::kRpcMagic) fail(Errc::corrupt, "rpc", name, "bad rpc magic");
      // acquire: pairs with the server's init, published by the header's init_state.
      c->server = c->view.control()->server.load(std::memory_order_acquire);
      if (!rpc_alive(c->server) ||
          c->view.control()->state.load(std::memory_order_acquire) != layout::kRpcRunning) {  // acquire: as above
        fail(Errc::peer_dead, "rpc", name, "its server is not running");
      }
      bool claimed = false;
      for (std::uint64_t i = 0; i < g.max_clients && !claimed; ++i) {
        std::uint64_t expected = layout::kOwnerFree;
        // acquire: pairs with the release store that freed the record (server
        // recovery or a detaching client): its slots are free before we use them.
        if (c->view.record(i)->owner.compare_exchange_strong(expected, me, std::memory_order_acquire,
                                                             std::memory_order_relaxed)) {
          c->client = static_cast<std::uint32_t>(i);
          claimed = true;
        }
      }
      if (!claimed)
        fail(Errc::busy, "rpc", name, "all " + std::to_string(g.max_clients) + " client records are in use");
      c->view.record(c->client)->connects.fetch_add(1, std::memory_order_relaxed);  // relaxed: a statistic
      c->first_slot = std::uint64_t{c->client} * g.slots_per_client;
      c->local.assign(g.slots_per_client, LocalSlot::free);
      c->req_block.assign(g.slots_per_client, layout::kNoBlock);
      c->resp_block.assign(g.slots_per_client, layout::kNoBlock);
      for (std::uint32_t k = 0; k < g.slots_per_client; ++k) {
        // relaxed (all three): the slots are ours alone until we publish a request.
        c->slot(k)->state.store(layout::kSlotFree, std::memory_order_relaxed);
        c->slot(k)->req_block.store(layout::kNoBlock, std::memory_order_relaxed);
        c->slot(k)->resp_block.store(layout::kNoBlock, std::memory_order_relaxed);
      }
      c->segment = std::move(seg);
      c->pool.attach(c->segment.get(), c->view, std::string(name));
      return c;
    } catch (const Error& e) {
      why = e.errc();
      text = e.what();
    }
    const bool retry = why == Errc::not_found || why == Errc::peer_dead || why == Errc::busy ||
                       why == Errc::creator_died || why == Errc::init_timeout;
    if (!retry || deadline.expired()) throw Error(why, text);
    platform::sleep_ns(1'000'000);
  }
}

RpcResponse RpcClientImpl::failed_response(Status why) noexcept {
  RpcResponse r;
  r.status_ = why;
  return r;
}

RpcTicket RpcClientImpl::failed_ticket(Status why) noexcept {
  RpcTicket t;
  t.status_ = why;
  return t;
}

RpcWriteLoan RpcClientImpl::failed_loan(Status why) noexcept {
  RpcWriteLoan l;
  l.status_ = why;
  return l;
}

bool RpcClientImpl::ensure_live(Status* status) noexcept {
  if (!attached) {  // never connected, or detached
    *status = Status::detached;
    return false;
  }
  if (conn && !conn->dead) {
    // relaxed: a closed server also stops answering; the flag just makes it prompt.
    bool gone = conn->view.control()->state.load(std::memory_order_relaxed) != layout::kRpcRunning;
    const std::uint64_t now = platform::monotonic_ns();
    if (!gone && now >= next_check_ns) {
      next_check_ns = now + liveness_ns;
      gone = !rpc_alive(conn->server);
    }
    if (!gone) return true;
    conn->dead_status = closed_or_dead(*conn);
    conn->dead = true;
  }
  if (by_fd) {  // no name to find a successor by
    *status = conn ? conn->dead_status : Status::peer_dead;
    return false;
  }
  // One attempt, no waiting: a dead server must not stall the call until its timeout.
  try {
    auto fresh = open(name, Deadline::at_ns(0));
    if (conn) ++reconnects;
    conn = std::move(fresh);
    next_check_ns = platform::monotonic_ns() + liveness_ns;
    return true;
  } catch (...) {
    *status = conn ? conn->dead_status : Status::peer_dead;
    return false;
  }
}

RpcWriteLoan RpcClientImpl::reserve(std::size_t n) noexcept {
  RpcWriteLoan out;
  out.client_ = this;
  if (!ensure_live(&out.status_)) return out;
  RpcConnection& c = *conn;
  const layout::RpcGeometry& g = c.view.geometry();
  if (n > g.max_request) {
    out.status_ = Status::too_large;
    return out;
  }
  std::uint32_t k = 0;
  bool found = false;
  for (; k < c.local.size(); ++k) {
    if (c.local[k] == LocalSlot::abandoned) c.reclaim(k);
    if (c.local[k] == LocalSlot::free) {
      found = true;
      break;
    }
  }
  if (!found) {
    out.status_ = Status::full;
    return out;
  }
  std::byte* data = nullptr;
  if (n <= g.req_inline) {
    data = c.view.request_inline(c.first_slot + k);
  } else {
    const std::uint32_t b = c.pool.acquire(c.client, /*grow=*/true);
    if (b == layout::kNoBlock) {
      out.status_ = Status::full;
      return out;
    }
    c.req_block[k] = b;
    data = c.view.block(b);
  }
  c.local[k] = LocalSlot::loaned;
  out.conn_ = conn;
  out.slot_ = k;
  out.data_ = data;
  out.size_ = n;
  out.status_ = Status::ok;
  return out;
}

RpcTicket RpcClientImpl::send(RpcWriteLoan&& loan) noexcept {
  RpcTicket t;
  t.client_ = this;
  if (!loan) {
    t.status_ = loan.status_;
    return t;
  }
  std::shared_ptr<RpcConnection> cp = std::move(loan.conn_);
  RpcConnection& c = *cp;
  const std::uint32_t k = loan.slot_;
  const std::size_t len = loan.committed_ ? loan.length_ : loan.size_;
  loan.data_ = nullptr;
  loan.status_ = Status::closed;
  if (c.dead) {
    if (c.req_block[k] != layout::kNoBlock) c.view.release_block(c.req_block[k], c.client);
    c.req_block[k] = layout::kNoBlock;
    c.local[k] = LocalSlot::free;
    t.status_ = c.dead_status;
    count_error(c);
    return t;
  }
  const layout::RpcGeometry& g = c.view.geometry();
  std::uint32_t block = c.req_block[k];
  if (block != layout::kNoBlock && len <= g.req_inline) {
    // Committed below the inline size: the server looks inline.
    std::memcpy(c.view.request_inline(c.first_slot + k), c.view.block(block), len);
    c.view.release_block(block, c.client);
    c.req_block[k] = block = layout::kNoBlock;
  }
  layout::RpcSlot* s = c.slot(k);
  const std::uint64_t id = next_call_id++;
  // relaxed (all three): published by the release store of state below.
  s->call_id.store(id, std::memory_order_relaxed);
  s->req_len.store(len, std::memory_order_relaxed);
  s->req_block.store(block, std::memory_order_relaxed);
  // release: publishes the request fields and payload to the server thread
  // that claims the slot (acquire CAS).
  s->state.store(layout::kSlotRequest, std::memory_order_release);
  c.view.control()->server_event.notify_one();
  count_call(c, len);
  c.local[k] = LocalSlot::in_flight;
  t.conn_ = std::move(cp);
  t.slot_ = k;
  t.call_id_ = id;
  t.status_ = Status::ok;
  return t;
}

bool RpcClientImpl::ready(const RpcTicket& t) const noexcept {
  if (!t.conn_) return false;
  // acquire: as in wait.
  return t.conn_->slot(t.slot_)->state.load(std::memory_order_acquire) == layout::kSlotResponse;
}

RpcResponse RpcClientImpl::wait(RpcTicket& t, Deadline deadline) noexcept {
  ZIPC_USE_CHECK(use, failed_response(Status::busy));  // (debug builds; the ticket stays valid)
  RpcResponse out;
  if (!t.conn_ || t.status_ != Status::ok) {
    out.status_ = t.status_ == Status::ok ? Status::closed : t.status_;
    return out;
  }
  std::shared_ptr<RpcConnection> hold = t.conn_;
  RpcConnection& c = *hold;
  const std::uint32_t k = t.slot_;
  layout::RpcSlot* s = c.slot(k);
  layout::RpcControl* ctl = c.view.control();
  auto answered = [s, ctl]() noexcept {
    // acquire: pairs with the server's release store of kSlotResponse.
    return s->state.load(std::memory_order_acquire) == layout::kSlotResponse ||
           ctl->state.load(std::memory_order_relaxed) != layout::kRpcRunning;  // relaxed: re-checked below
  };
  const auto settled = [&]() noexcept { return c.dead || answered(); };
  if (!settled()) {
    if (&c != conn.get()) next_check_ns = 0;  // a ticket of an older connection: check its server now
    // The one recovery-sliced wait, on this client's liveness schedule.
    const bool done = periodic_recovery_wait(
        deadline, settled, [&]() noexcept { return next_check_ns; },
        [&](Deadline d) noexcept {
          return c.view.record(c.client)->response_event.wait_until(answered, d, wait_options);
        },
        [&](std::uint64_t now) noexcept {
          next_check_ns = now + liveness_ns;
          if (rpc_alive(c.server)) return false;
          c.dead_status = Status::peer_dead;
          c.dead = true;
          return true;
        });
    if (!done) {
      out.status_ = Status::timeout;
      return out;  // the ticket stays valid
    }
  }
  // acquire: as in answered().
  if (c.dead || s->state.load(std::memory_order_acquire) != layout::kSlotResponse) {
    if (!c.dead) {
      c.dead_status = closed_or_dead(c);
      c.dead = true;
    }
    out.status_ = c.dead_status;
    count_error(c);
    abandon(t);
    return out;
  }
  // relaxed (all four): ordered by the acquire load of state.
  const std::uint32_t result = s->result.load(std::memory_order_relaxed);
  const std::uint64_t len = s->resp_len.load(std::memory_order_relaxed);
  const std::uint32_t block = s->resp_block.load(std::memory_order_relaxed);
  const std::uint64_t reply_id = s->reply_call_id.load(std::memory_order_relaxed);
  const std::uint32_t error_code = s->error_code.load(std::memory_order_relaxed);
  const std::uint64_t error_type_len = s->error_type_len.load(std::memory_order_relaxed);
  const layout::RpcGeometry& g = c.view.geometry();
  c.req_block[k] = layout::kNoBlock;  // the server gave it back
  c.local[k] = LocalSlot::held;
  c.resp_block[k] = block < g.block_count ? block : layout::kNoBlock;
  t.conn_.reset();
  t.status_ = Status::closed;
  Status st = Status::ok;
  const std::byte* data = nullptr;
  const bool has_bytes = result == layout::kResultOk || result == layout::kResultError;
  const bool foreign_or_malformed =
      reply_id != t.call_id_ ||
      (!has_bytes && result != layout::kResultTooLarge && result != layout::kResultNoMemory) ||
      (has_bytes && len > g.max_response) || (result == layout::kResultError && error_type_len > len);
  if (foreign_or_malformed) {
    st = Status::corrupt;
  } else if (result == layout::kResultTooLarge) {
    st = Status::too_large;
  } else if (result == layout::kResultNoMemory) {
    st = Status::full;
  } else if (len <= g.resp_inline) {
    data = c.view.response_inline(c.first_slot + k);
  } else if (block < g.block_count && len <= g.block_size && c.pool.usable(block)) {
    data = c.view.block(block);
  }
  if (st == Status::ok && data == nullptr) st = Status::corrupt;  // a length its block cannot hold
  if (st == Status::ok && result == layout::kResultError) {
    st = Status::remote_error;  // held like a response: the text is read in place
    out.error_code_ = error_code;
    out.error_type_len_ = static_cast<std::uint32_t>(error_type_len);
  }
  if (st != Status::ok && st != Status::remote_error) {
    c.release(k);
    count_error(c);
    out.status_ = st;
    return out;
  }
  out.conn_ = std::move(hold);
  out.slot_ = k;
  out.data_ = data;
  out.size_ = static_cast<std::size_t>(len);
  out.status_ = st;
  if (st == Status::remote_error) count_error(c);
  return out;
}

void RpcClientImpl::abandon(RpcTicket& t) noexcept {
  if (!t.conn_) return;
  RpcConnection& c = *t.conn_;
  c.local[t.slot_] = LocalSlot::abandoned;
  c.reclaim(t.slot_);
  t.conn_.reset();
  t.status_ = Status::closed;
}

}  // namespace detail

}  // namespace zipc
