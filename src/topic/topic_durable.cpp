// Durable reliable subscribers: name checks, the attach lock, claiming,
// holding and parking a durable slot (topic_durable.hpp).
#include "topic/topic_durable.hpp"

#include <algorithm>
#include <chrono>
#include <cstring>
#include <thread>

#include "platform/clock.hpp"
#include "zipc/log.hpp"
#include "zipc/process.hpp"

namespace zipc::detail {

namespace {

constexpr std::size_t kMaxNameBytes = layout::kDurableNameBytes - 1;
constexpr std::chrono::milliseconds kMaxGrace = std::chrono::hours(24 * 7);
constexpr std::uint64_t kLockPatienceNs = 5'000'000'000;  // a live holder is in a short scan

bool name_char_ok(char c) noexcept {
  return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '.' || c == '_' || c == '-';
}

bool name_equals(const layout::SubscriberSlot& slot, std::string_view name) noexcept {
  return name.size() <= kMaxNameBytes && std::memcmp(slot.name, name.data(), name.size()) == 0 &&
         slot.name[name.size()] == '\0';
}

std::string pid_of(std::uint64_t owner) {
  return std::to_string(unpack(owner).pid);
}

// AdminLine::durable_lock for the scope: durable attachers one at a time.
// A holder that died is replaced at once; one of our own threads (same
// packed id) or a live process is waited for, boundedly.
class DurableLock {
 public:
  explicit DurableLock(TopicState& s) : word_(s.admin().durable_lock) {
    const std::uint64_t give_up = platform::monotonic_ns() + kLockPatienceNs;
    for (;;) {
      std::uint64_t holder = 0;
      // acq_rel: taking the lock orders our reads of the slots after the previous holder's writes.
      if (word_.compare_exchange_strong(holder, s.me, std::memory_order_acq_rel)) return;
      if (holder != s.me && !is_alive_packed(holder)) {
        // acq_rel: as above, taken over from a dead holder.
        if (word_.compare_exchange_strong(holder, s.me, std::memory_order_acq_rel)) {
          log_message(LogLevel::info, s.name(), "took over the durable-subscriber lock of dead pid " + pid_of(holder));
          return;
        }
        continue;
      }
      if (platform::monotonic_ns() > give_up) {
        topic_fail(Errc::busy, s.name(),
                   "the durable-subscriber lock is held by live pid " + pid_of(holder) + " for over 5 s");
      }
      std::this_thread::sleep_for(std::chrono::microseconds(100));
    }
  }
  ~DurableLock() {
    word_.store(0, std::memory_order_release);  // release: our slot writes before the next holder's reads
  }
  DurableLock(const DurableLock&) = delete;
  DurableLock& operator=(const DurableLock&) = delete;

 private:
  std::atomic<std::uint64_t>& word_;
};

std::uint64_t grace_ns_of(const SubscribeOptions& o) noexcept {
  return static_cast<std::uint64_t>(std::chrono::nanoseconds(o.durable_grace).count());
}

// Ours now (owner CAS won): a live owner again, with the caller's grace.
void adopt(layout::SubscriberSlot& slot, std::uint64_t grace_ns) noexcept {
  // seq_cst: after our owner CAS, against a publisher that noted a death
  // meanwhile (durable_hold re-checks the owner after its own CAS).
  slot.dead_since.store(0, std::memory_order_seq_cst);
  slot.grace_ns.store(grace_ns, std::memory_order_relaxed);  // relaxed: read by publishers only after a death
}

}  // namespace

void check_durable_options(std::string_view topic, const SubscribeOptions& o) {
  const std::string& n = o.durable_name;
  if (n.empty()) return;
  if (n.size() > kMaxNameBytes) {
    topic_fail(Errc::invalid_argument, topic,
               "durable_name is " + std::to_string(n.size()) + " bytes; at most " + std::to_string(kMaxNameBytes));
  }
  for (const char c : n) {
    if (!name_char_ok(c)) {
      topic_fail(Errc::invalid_argument, topic,
                 "durable_name may hold only A-Z a-z 0-9 . _ - (byte " + std::to_string(static_cast<unsigned char>(c)) +
                     " is not allowed)");
    }
  }
  if (o.delivery != Delivery::reliable) {
    topic_fail(Errc::invalid_argument, topic, "a durable subscriber ('" + n + "') must be Delivery::reliable");
  }
  if (o.durable_grace.count() < 0 || o.durable_grace > kMaxGrace) {
    topic_fail(Errc::invalid_argument, topic,
               "durable_grace of " + std::to_string(o.durable_grace.count()) + " ms is outside [0, 7 days]");
  }
}

DurableClaim claim_durable_slot(TopicState& s, const SubscribeOptions& o) {
  const std::string& name = o.durable_name;
  const std::uint64_t grace = grace_ns_of(o);
  DurableLock lock(s);
  // The named slot, if any (names are unique: only lock holders write them).
  for (int attempt = 0; attempt < 64; ++attempt) {
    bool raced = false;
    for (std::uint32_t i = 0; i < s.max_subscribers && !raced; ++i) {
      auto& slot = s.subscribers[i];
      // acquire: pairs with the release stores of owner (attach, detach, park).
      std::uint64_t owner = slot.owner.load(std::memory_order_acquire);
      if (owner == 0 || slot.durable.load(std::memory_order_acquire) == 0 || !name_equals(slot, name)) continue;
      const bool parked = owner == layout::kParkedOwner;
      if (!parked && owner != layout::kOrphanOwner && is_alive_packed(owner)) {
        topic_fail(Errc::busy, s.name(),
                   "durable subscriber '" + name + "' is held by a live subscriber (pid " + pid_of(owner) +
                       "); one process at a time may hold a durable name");
      }
      // acq_rel: the one CAS a parking publisher races with (durable_hold).
      if (!slot.owner.compare_exchange_strong(owner, s.me, std::memory_order_acq_rel)) {
        raced = true;  // parked, taken or freed meanwhile: look again
        continue;
      }
      DurableClaim c;
      c.slot = i;
      if (parked) {
        c.kind = DurableClaim::Kind::parked;
        // relaxed: stored before the parking CAS, which our CAS acquired.
        c.sequence = slot.sequence.load(std::memory_order_relaxed);
      } else {
        c.kind = DurableClaim::Kind::held;
        c.position = slot.position.load(std::memory_order_acquire);  // acquire: the last position it published
      }
      adopt(slot, grace);
      return c;
    }
    if (!raced) break;
  }
  // A new name: a free slot, else a dead non-durable one, else (last resort) a parked durable one.
  for (int pass = 0; pass < 3; ++pass) {
    for (std::uint32_t i = 0; i < s.max_subscribers; ++i) {
      auto& slot = s.subscribers[i];
      std::uint64_t owner = slot.owner.load(std::memory_order_acquire);  // acquire: as above
      bool take = false;
      if (pass == 0) {
        take = owner == 0;
      } else if (pass == 1) {
        take = owner != 0 && !durable_reserved(slot, owner) && owner != layout::kParkedOwner &&
               owner != layout::kOrphanOwner && !is_alive_packed(owner);
      } else {
        take = owner == layout::kParkedOwner;
      }
      // acq_rel: owning the slot before we write its fields.
      if (!take || !slot.owner.compare_exchange_strong(owner, s.me, std::memory_order_acq_rel)) continue;
      // Not durable until its name is complete (a crash here leaves a plain reliable slot).
      slot.durable.store(0, std::memory_order_release);  // release: before the name changes
      slot.proxy.store(0, std::memory_order_release);    // release: a reused proxy slot is ours now
      std::memset(slot.name, 0, sizeof slot.name);
      std::memcpy(slot.name, name.data(), name.size());
      adopt(slot, grace);
      slot.durable.store(1, std::memory_order_release);  // release: publishes the name and grace
      DurableClaim c;
      c.slot = i;
      return c;
    }
  }
  topic_fail(Errc::busy, s.name(),
             "all " + std::to_string(s.max_subscribers) + " subscriber slots hold live or durable subscribers");
}

bool durable_hold(TopicState& s, layout::SubscriberSlot& slot, std::uint64_t owner, std::uint64_t position) noexcept {
  const std::uint64_t now = platform::monotonic_ns();
  // seq_cst (all three): against an attacher's owner CAS then dead_since reset (adopt).
  std::uint64_t since = slot.dead_since.load(std::memory_order_seq_cst);
  if (since == 0) {
    // The grace starts now. If the slot changed hands meanwhile, undo.
    const std::uint64_t mark = std::max<std::uint64_t>(now, 1);
    if (slot.dead_since.compare_exchange_strong(since, mark, std::memory_order_seq_cst) &&
        slot.owner.load(std::memory_order_seq_cst) != owner) {
      std::uint64_t ours = mark;
      slot.dead_since.compare_exchange_strong(ours, 0, std::memory_order_seq_cst);
    }
    return true;
  }
  // relaxed: written by the attacher before the owner we acquired.
  if (now >= since && now - since < slot.grace_ns.load(std::memory_order_relaxed)) return true;
  // The grace ran out. The position is still protected (we have not dropped
  // past it): note the next unread sequence for the restart, then park.
  std::uint64_t seq = 0;
  if (sequence_at(s, position, &seq))
    slot.sequence.store(seq, std::memory_order_relaxed);  // relaxed: the CAS publishes it
  // acquire: the position we noted is still the slot's (no restart published a new one).
  if (slot.position.load(std::memory_order_acquire) != position) return true;
  const std::string name(slot.name, strnlen(slot.name, sizeof slot.name));  // unchanged until it is parked
  std::uint64_t expect = owner;
  // acq_rel: the CAS a restarting subscriber races with; release publishes the sequence.
  if (!slot.owner.compare_exchange_strong(expect, layout::kParkedOwner, std::memory_order_acq_rel)) return true;
  log_message(LogLevel::info, s.name(),
              "durable subscriber '" + name + "': grace over, position released at sequence " + std::to_string(seq));
  return false;
}

void durable_detach(TopicState& s, layout::SubscriberSlot& slot) noexcept {
  // seq_cst: the grace runs from now; stored before the owner leaves.
  slot.dead_since.store(std::max<std::uint64_t>(platform::monotonic_ns(), 1), std::memory_order_seq_cst);
  std::uint64_t me = s.me;
  // release: our last position and the grace before the orphan mark.
  slot.owner.compare_exchange_strong(me, layout::kOrphanOwner, std::memory_order_release);
  s.events().space.notify_all();
}

}  // namespace zipc::detail
