// Reader seats of read-only reliable topic subscribers: the reader's claim
// and the publisher's watch (see topic_reader_seat.hpp).
#include "topic/topic_reader_seat.hpp"

#include <fcntl.h>

#include <cstring>

#include "layout/segment_header.hpp"
#include "platform/file.hpp"
#include "topic/topic_state.hpp"
#include "zipc/process.hpp"

namespace zipc::detail {

namespace {

constexpr std::uint64_t kScanPeriodNs = 1'000'000;        // a publisher looks for new seats at most this often
constexpr std::uint64_t kFullScanPeriodNs = 100'000'000;  // ... and past a missing seat this often

std::string seat_name(const TopicState& s, std::uint32_t k) {
  return s.name().substr(0, Segment::kMaxNameLength - 8) + ".ro" + std::to_string(k);
}

SegmentOptions seat_options(const TopicState& s, std::uint32_t k) {
  SegmentOptions o;
  o.path = reader_seat_path(s, k);
  o.mode = mode::everyone_reads;  // publishers of any user read it; a position is no secret
  o.open_timeout = std::chrono::milliseconds(50);
  return o;
}

void init_seat(layout::ReaderSeat* seat, const TopicState& s, std::uint64_t position, std::uint64_t sequence) {
  seat->magic = layout::kReaderSeatMagic;
  seat->topic_id = s.incarnation;
  seat->position.store(position, std::memory_order_relaxed);  // relaxed: published by state below
  seat->sequence.store(sequence, std::memory_order_relaxed);  // relaxed: statistics
  // release: the fields above before a publisher that reads the state as active.
  seat->state.store(layout::kSeatActive, std::memory_order_release);
}

}  // namespace

std::string reader_seat_path(const TopicState& s, std::uint32_t k) {
  // A topic opened by name or path has a file path; a memfd or a descriptor
  // ("fd:N") has none, and so no seats.
  const std::string& topic = s.segment.path();
  return topic.empty() || topic.front() != '/' ? std::string() : topic + ".ro" + std::to_string(k);
}

std::unique_ptr<ReaderSeatClaim> ReaderSeatClaim::claim(TopicState& s, std::uint64_t position, std::uint64_t sequence) {
  if (reader_seat_path(s, 0).empty()) {
    topic_fail(Errc::wrong_role, s.name(),
               "opened read-only from a descriptor: a read-only reliable subscriber keeps its position in a "
               "seat file next to the topic's file, and this topic has none; subscribe with Delivery::lossy");
  }
  std::unique_ptr<ReaderSeatClaim> c(new ReaderSeatClaim);
  c->me_ = s.me;
  SegmentSpec spec;
  spec.kind = SegmentKind::topic_reader;
  spec.payload_size = sizeof(layout::ReaderSeat);
  for (std::uint32_t k = 0; k < layout::kMaxReaderSeats; ++k) {
    const SegmentOptions so = seat_options(s, k);
    const std::string name = seat_name(s, k);
    try {
      c->segment_ = Segment::create(
          name, spec,
          [&](std::byte* p, std::size_t) {
            auto* seat = ::new (p) layout::ReaderSeat{};
            seat->owner.store(c->me_, std::memory_order_relaxed);  // relaxed: the segment's ready flag publishes it
            init_seat(seat, s, position, sequence);
          },
          so);
      c->seat_ = reinterpret_cast<layout::ReaderSeat*>(c->segment_.payload());
      c->k_ = k;
      return c;
    } catch (const Error& e) {
      if (e.errc() != Errc::already_exists) {
        if (e.errc() == Errc::permission_denied) continue;
        throw;
      }
    }
    // Taken: ours to reuse only if its reader died or left, and we may write it.
    Segment seg;
    try {
      seg = Segment::open(name, SegmentKind::topic_reader, so);
    } catch (const Error&) {
      continue;  // another user's seat, or one still being created
    }
    if (seg.payload_size() < sizeof(layout::ReaderSeat)) continue;
    auto* seat = reinterpret_cast<layout::ReaderSeat*>(seg.payload());
    // acquire: pairs with the owner CAS of the reader that took it.
    std::uint64_t owner = seat->owner.load(std::memory_order_acquire);
    // acquire: the state a leaving reader stored (release).
    const bool left = seat->state.load(std::memory_order_acquire) != layout::kSeatActive;
    if (owner != 0 && !left && is_alive_packed(owner)) continue;
    // acq_rel: one reader wins a dead reader's seat.
    if (!seat->owner.compare_exchange_strong(owner, c->me_, std::memory_order_acq_rel)) continue;
    // relaxed + the release in init_seat: a publisher sees it left until it is whole again.
    seat->state.store(layout::kSeatLeft, std::memory_order_relaxed);
    init_seat(seat, s, position, sequence);
    c->segment_ = std::move(seg);
    c->seat_ = seat;
    c->k_ = k;
    return c;
  }
  topic_fail(Errc::busy, s.name(),
             "all " + std::to_string(layout::kMaxReaderSeats) +
                 " read-only reliable reader seats are held by live readers (or by another user's files)");
}

ReaderSeatClaim::~ReaderSeatClaim() {
  if (seat_ == nullptr) return;
  // release: a publisher that reads left frees our slot; nothing we read is held any more.
  seat_->state.store(layout::kSeatLeft, std::memory_order_release);
  std::uint64_t me = me_;
  // release: the seat is free for the next reader.
  if (seat_->owner.compare_exchange_strong(me, 0, std::memory_order_release)) {
    (void)platform::unlink_path(segment_.path());
  }
  segment_.detach();
}

void ReaderSeatClaim::store(std::uint64_t position, std::uint64_t sequence) noexcept {
  seat_->sequence.store(sequence, std::memory_order_relaxed);  // relaxed: statistics
  // release: we are done reading below position (pairs with the publisher's pread, a read after it).
  seat_->position.store(position, std::memory_order_release);
}

bool ReaderSeatClaim::adopted(const TopicState& s) const noexcept {
  for (std::uint32_t i = 0; i < s.max_subscribers; ++i) {
    const auto& slot = s.subscribers[i];
    // acquire: pairs with the adopter's release store of proxy (after its owner CAS).
    if (slot.proxy.load(std::memory_order_acquire) == k_ + 1 &&
        slot.owner.load(std::memory_order_acquire) == me_ &&  // acquire: as proxy
        slot.mode.load(std::memory_order_acquire) == 1) {     // acquire: the adopter stores it last but position
      return true;
    }
  }
  return false;
}

ReaderSeatWatch::~ReaderSeatWatch() {
  for (int& fd : fds_) {
    if (fd >= 0) (void)platform::close_fd(fd);
  }
}

ReaderSeatWatch::Read ReaderSeatWatch::read_seat(const TopicState& s, std::uint32_t k, Copy* out,
                                                 bool reopen) noexcept {
  int& fd = fds_[k];
  if (reopen && fd >= 0) {
    (void)platform::close_fd(fd);
    fd = -1;
  }
  if (fd < 0) {
    std::string path;
    try {
      path = reader_seat_path(s, k);
    } catch (...) {
      return Read::unstable;  // out of memory: say nothing about the seat
    }
    if (path.empty()) return Read::missing;
    fd = platform::open_file(path, O_RDONLY, 0);
    if (fd < 0) {
      fd = -1;
      return Read::missing;
    }
  }
  // The header's magic and kind, then the payload twice: equal copies are not
  // torn by the reader's concurrent stores (pread copies bytes, not words).
  std::uint64_t head[2] = {};
  if (platform::read_at(fd, head, sizeof head, 0) != static_cast<long>(sizeof head)) return Read::foreign;
  if (head[0] != layout::kMagic || (head[1] >> 32) != static_cast<std::uint64_t>(SegmentKind::topic_reader)) {
    return Read::foreign;
  }
  // A reader that is reading moves its position between the two copies: after
  // a few tries the seat says nothing now (the caller holds at what it knew).
  std::uint64_t a[8] = {}, b[8] = {};
  for (int attempt = 0;; ++attempt) {
    if (attempt == 8) return Read::unstable;
    if (platform::read_at(fd, a, sizeof a, layout::kPayloadOffset) != static_cast<long>(sizeof a)) return Read::foreign;
    if (platform::read_at(fd, b, sizeof b, layout::kPayloadOffset) != static_cast<long>(sizeof b)) return Read::foreign;
    if (std::memcmp(a, b, sizeof a) == 0) break;
  }
  out->magic = a[0];
  out->topic_id = a[1];
  out->owner = a[2];
  out->position = a[3];
  out->sequence = a[4];
  out->state = a[5];
  return out->magic == layout::kReaderSeatMagic && out->topic_id == s.incarnation ? Read::ok : Read::foreign;
}

bool ReaderSeatWatch::maybe_adopt(TopicState& s, std::uint64_t now_ns) noexcept {
  if (now_ns < next_scan_ns_) return false;
  next_scan_ns_ = now_ns + kScanPeriodNs;
  const bool full = now_ns >= next_full_scan_ns_;
  if (full) next_full_scan_ns_ = now_ns + kFullScanPeriodNs;
  bool took = false;
  for (std::uint32_t k = 0; k < layout::kMaxReaderSeats; ++k) {
    Copy c;
    const auto live = [&c] { return c.state == layout::kSeatActive && c.owner != 0 && is_alive_packed(c.owner); };
    // The file already open tells while its reader lives; one whose reader
    // left or died may have been replaced at its path by a newer reader's,
    // so it is opened again (and every file on a full scan).
    const bool was_open = fds_[k] >= 0;
    Read r = read_seat(s, k, &c, /*reopen=*/full);
    if (!full && was_open && (r != Read::ok || !live())) r = read_seat(s, k, &c, /*reopen=*/true);
    if (r != Read::ok) {
      // Readers take the lowest free seat: past a missing one there is
      // rarely another, so only the periodic full scan looks further.
      if (fds_[k] < 0 && !full) break;
      continue;
    }
    if (!live()) continue;
    bool held = false;
    for (std::uint32_t i = 0; i < s.max_subscribers && !held; ++i) {
      const auto& slot = s.subscribers[i];
      // acquire: pairs with the adopter's release store of proxy.
      held = slot.proxy.load(std::memory_order_acquire) == k + 1 &&
             slot.owner.load(std::memory_order_acquire) == c.owner;  // acquire: as proxy
    }
    adopted_seen_ = true;
    if (held) continue;
    std::uint32_t i = 0;
    try {
      i = claim_plain_slot(s, c.owner, k + 1);
    } catch (...) {
      continue;  // every slot is held: the reader stays unadopted (it counts what it loses)
    }
    auto& slot = s.subscribers[i];
    slot.sequence.store(c.sequence, std::memory_order_relaxed);  // relaxed: statistics only
    slot.lost.store(0, std::memory_order_relaxed);               // relaxed: statistics only
    slot.mode.store(1, std::memory_order_release);               // release: seen with the position below
    // seq_cst: Dekker with make_room, as a joining subscriber's own position
    // store and generation bump (the reader checks the retained floor after
    // it sees the adoption).
    slot.position.store(c.position, std::memory_order_seq_cst);
    s.admin().subscriber_generation.fetch_add(1, std::memory_order_seq_cst);
    took = true;
  }
  return took;
}

ReaderSeatWatch::Seat ReaderSeatWatch::position(const TopicState& s, std::uint32_t k, std::uint64_t owner,
                                                std::uint64_t* position) noexcept {
  if (k >= layout::kMaxReaderSeats) return Seat::ignore;
  Copy c;
  Read r = read_seat(s, k, &c, /*reopen=*/false);
  if (r == Read::unstable) return Seat::unstable;
  if (r != Read::ok || c.owner != owner) r = read_seat(s, k, &c, /*reopen=*/true);  // a newer file at that path?
  if (r == Read::unstable) return Seat::unstable;
  if (r != Read::ok) return Seat::left;  // removed, truncated or replaced: the reader we adopted is gone
  if (c.owner != owner || c.state != layout::kSeatActive) return Seat::left;
  // acquire: pairs with the release raise of oldest / the commit's release store of cursor.
  const std::uint64_t oldest = s.pub().oldest.load(std::memory_order_acquire);
  const std::uint64_t cursor = s.pub().cursor.load(std::memory_order_acquire);
  if (c.position % layout::kRecordAlign != 0 || c.position < oldest || c.position > cursor) return Seat::ignore;
  *position = c.position;
  return Seat::holds;
}

}  // namespace zipc::detail
