// The named-object directory of a zipc::Heap: a singly linked list of
// entries in the arena, guarded by HeapControl::names_lock. Every change is
// published by one 8-byte store (the head, or one entry's next), so a
// process dying mid-change leaves the list whole (at worst a leaked entry).
// Writers also make HeapControl::names_version odd around each change, so a
// read-only reader, which cannot take the lock, walks without it and retries
// a walk that a change overlapped (a seqlock).
#include <atomic>
#include <cstring>

#include "core/fail.hpp"
#include "core/racy_copy.hpp"
#include "core/round_up.hpp"
#include "heap/heap_lock.hpp"
#include "heap/heap_tlsf.hpp"
#include "layout/heap_layout.hpp"
#include "platform/clock.hpp"
#include "zipc/heap.hpp"
#include "zipc/process.hpp"

namespace zipc {

using namespace layout;

namespace {

constexpr std::size_t kMaxName = 255;

std::uint32_t entry_check(const NameEntry& e) noexcept {
  std::uint64_t h = e.object_offset * 0x9e3779b97f4a7c15ull ^ e.type_hash ^ (e.object_size << 17) ^ e.name_length;
  h ^= h >> 29;
  h *= 0xbf58476d1ce4e5b9ull;
  h ^= h >> 32;
  return static_cast<std::uint32_t>(h);
}

class NamesLock {
 public:
  explicit NamesLock(HeapControl* c) : c_(c) {
    // A dead holder can only have leaked an entry (see the file comment), so
    // owner_died needs no repair.
    (void)detail::owner_lock(c->names_lock);
  }
  ~NamesLock() {
    if (c_ != nullptr) detail::owner_unlock(c_->names_lock);
  }
  void release() noexcept { c_ = nullptr; }  // ownership passes to commit/abort
  NamesLock(const NamesLock&) = delete;
  NamesLock& operator=(const NamesLock&) = delete;

 private:
  HeapControl* c_;
};

// A change to the list, bracketed by an odd names_version (held under names_lock).
class DirectoryChange {
 public:
  explicit DirectoryChange(HeapControl* c) : c_(c) {
    // relaxed + the release fence: the odd value is visible before any store of the change
    // (the fence is skipped under TSan, which does not model fences; see racy_copy.hpp).
    // A version left odd by a writer that died mid-change moves on too, so a
    // reader that walked past the dead writer sees this change.
    const std::uint64_t v = c_->names_version.load(std::memory_order_relaxed);
    c_->names_version.store((v & 1) != 0 ? v + 2 : v + 1, std::memory_order_relaxed);
    detail::fence_release();
  }
  ~DirectoryChange() {
    // release: the change happens-before a reader's acquire load of the new even value.
    c_->names_version.store((c_->names_version.load(std::memory_order_relaxed) | 1) + 1, std::memory_order_release);
  }
  DirectoryChange(const DirectoryChange&) = delete;
  DirectoryChange& operator=(const DirectoryChange&) = delete;

 private:
  HeapControl* c_;
};

// The one store that publishes a change to the list (the head or an entry's next).
void publish_link(std::uint64_t& link, std::uint64_t offset) noexcept {
  // release: the entry's fields are written before it becomes reachable (pairs with the
  // reader's acquire load of directory_head and its version check).
  std::atomic_ref<std::uint64_t>(link).store(offset, std::memory_order_release);
}

struct Found {
  NameEntry* entry = nullptr;
  NameEntry* prev = nullptr;  // nullptr: entry is the head
};

// Walks the list with every offset validated; throws corrupt on a bad entry.
Found lookup(const Heap& heap, std::string_view name) {
  const HeapControl* c = heap.control();
  Found f;
  NameEntry* prev = nullptr;
  std::uint64_t o = c->directory_head;
  const std::uint64_t max_steps = heap.arena_size() / 48;
  for (std::uint64_t steps = 0; o != kNil; ++steps) {
    auto* e = heap.at<NameEntry>(o);
    if (e == nullptr || steps > max_steps || e->check != entry_check(*e) || e->name_length > kMaxName ||
        heap.at<char>(o + sizeof(NameEntry) + e->name_length) == nullptr) {
      fail(Errc::corrupt, "heap '" + heap.name() + "', object", name, "the named-object directory is damaged");
    }
    const char* n = reinterpret_cast<const char*>(e) + sizeof(NameEntry);
    if (std::string_view(n, e->name_length) == name) {
      f.entry = e;
      f.prev = prev;
      return f;
    }
    prev = e;
    o = e->next;
  }
  return f;
}

void* object_of(const Heap& heap, std::string_view name, const NameEntry* e) {
  void* p = heap.at<char>(e->object_offset);
  if (p == nullptr || e->object_size > heap.arena_size() - e->object_offset) {
    fail(Errc::corrupt, "heap '" + heap.name() + "', object", name, "entry points outside the heap");
  }
  return p;
}

enum class WalkResult : std::uint8_t { found, absent, damaged };

// One walk of the list without the lock: every entry is copied (a writer may
// be freeing and reusing it) and checked before use.
WalkResult walk_unlocked(const Heap& heap, std::string_view name, NameEntry& out) noexcept {
  HeapControl* c = heap.control();
  // acquire: pairs with publish_link's release store; the first entry's fields are visible.
  std::uint64_t o = std::atomic_ref<std::uint64_t>(c->directory_head).load(std::memory_order_acquire);
  const std::uint64_t max_steps = heap.arena_size() / 48;
  char n[kMaxName];
  for (std::uint64_t steps = 0; o != kNil; ++steps) {
    const auto* e = heap.at<NameEntry>(o);
    if (e == nullptr || steps > max_steps) return WalkResult::damaged;
    NameEntry copy;
    detail::racy_copy(&copy, e, sizeof copy);
    if (copy.check != entry_check(copy) || copy.name_length > kMaxName ||
        heap.at<char>(o + sizeof(NameEntry) + copy.name_length) == nullptr) {
      return WalkResult::damaged;
    }
    if (copy.name_length == name.size()) {
      detail::racy_copy(n, reinterpret_cast<const char*>(e) + sizeof(NameEntry), copy.name_length);
      if (std::memcmp(n, name.data(), name.size()) == 0) {
        out = copy;
        return WalkResult::found;
      }
    }
    o = copy.next;
  }
  return WalkResult::absent;
}

}  // namespace

// Read-only: no lock (taking it is a write); a walk is kept only when
// names_version was even and unchanged around it. A writer that died mid-change
// leaves the version odd, but the list whole: then the walk is taken as it is.
void* Heap::names_find_unlocked(std::string_view name, std::uint64_t type_hash) const {
  if (name.empty() || name.size() > kMaxName)
    fail(Errc::invalid_name, "heap '" + this->name() + "', object", name, "empty or over 255 bytes");
  constexpr int kAttempts = 20000;  // each waits at most ~50 us behind a live writer: ~1 s in all
  for (int attempt = 0; attempt < kAttempts; ++attempt) {
    // acquire: pairs with DirectoryChange's release store; the finished change is visible.
    const std::uint64_t v1 = control_->names_version.load(std::memory_order_acquire);
    if ((v1 & 1) != 0) {
      // acquire: the holder's identity, to tell a writer at work from a dead one.
      const std::uint64_t holder = control_->names_lock.owner.load(std::memory_order_acquire);
      if (holder != 0 && is_alive_packed(holder)) {
        platform::sleep_ns(attempt < 16 ? 1000 : 50000);
        continue;
      }
    }
    NameEntry e{};
    const WalkResult r = walk_unlocked(*this, name, e);
    detail::fence_acquire();  // the copies above before the re-check
    // acquire, after the fence: a change that overlapped the walk is seen here.
    if (control_->names_version.load(std::memory_order_acquire) != v1) continue;
    if (r == WalkResult::damaged)
      fail(Errc::corrupt, "heap '" + this->name() + "', object", name, "the named-object directory is damaged");
    if (r == WalkResult::absent) return nullptr;
    if (e.type_hash != type_hash)
      fail(Errc::wrong_kind, "heap '" + this->name() + "', object", name, "it holds another type");
    return object_of(*this, name, &e);
  }
  fail(Errc::busy, "heap '" + this->name() + "', object", name,
       "the named-object directory kept changing for 1 s; a read-only reader cannot take the lock");
}

void Heap::refuse_if_read_only(const char* what, std::string_view object) const {
  if (segment_.read_only()) {
    fail(Errc::wrong_role, "heap '" + name() + "', object", object,
         std::string(what) + ": the heap was opened read-only (SegmentOptions::read_only); only find works");
  }
}

Heap::NamedSlot Heap::names_begin(std::string_view name, std::uint64_t type_hash, std::size_t size, std::size_t align,
                                  bool may_exist) {
  if (control_ == nullptr) throw Error(Errc::invalid_argument, "heap: not open");
  refuse_if_read_only("construct", name);
  if (name.empty() || name.size() > kMaxName)
    fail(Errc::invalid_name, "heap '" + this->name() + "', object", name, "empty or over 255 bytes");
  NamesLock lock(control_);
  Found f = lookup(*this, name);
  if (f.entry != nullptr) {
    if (f.entry->type_hash != type_hash)
      fail(Errc::wrong_kind, "heap '" + this->name() + "', object", name, "it holds another type");
    if (!may_exist) fail(Errc::already_exists, "heap '" + this->name() + "', object", name, "the name is taken");
    return NamedSlot{object_of(*this, name, f.entry), f.entry, true};
  }
  if (align < 16) align = 16;
  const std::uint64_t object_at = round_up(sizeof(NameEntry) + name.size(), align);
  Allocation a = try_allocate(object_at + size, align);
  if (a.ptr == nullptr) {
    fail(a.status == HeapStatus::out_of_memory ? Errc::out_of_memory : Errc::corrupt,
         "heap '" + this->name() + "', object", name,
         std::string("allocate ") + std::to_string(object_at + size) + " bytes: " + to_string(a.status));
  }
  auto* e = static_cast<NameEntry*>(a.ptr);
  e->next = control_->directory_head;
  e->object_offset = offset_of(a.ptr) + object_at;
  e->type_hash = type_hash;
  e->object_size = size;
  e->name_length = static_cast<std::uint32_t>(name.size());
  e->check = entry_check(*e);
  std::memcpy(reinterpret_cast<char*>(e) + sizeof(NameEntry), name.data(), name.size());
  lock.release();
  return NamedSlot{static_cast<char*>(a.ptr) + object_at, e, false};
}

void Heap::names_commit(const NamedSlot& slot) noexcept {
  // The object is built: publishing the entry is one store.
  {
    DirectoryChange change(control_);
    publish_link(control_->directory_head, offset_of(slot.entry));
  }
  detail::owner_unlock(control_->names_lock);
}

void Heap::names_abort(const NamedSlot& slot) noexcept {
  (void)deallocate(slot.entry);
  detail::owner_unlock(control_->names_lock);
}

void* Heap::names_find(std::string_view name, std::uint64_t type_hash) {
  if (control_ == nullptr) throw Error(Errc::invalid_argument, "heap: not open");
  if (segment_.read_only()) return names_find_unlocked(name, type_hash);
  NamesLock lock(control_);
  Found f = lookup(*this, name);
  if (f.entry == nullptr) return nullptr;
  if (f.entry->type_hash != type_hash)
    fail(Errc::wrong_kind, "heap '" + this->name() + "', object", name, "it holds another type");
  return object_of(*this, name, f.entry);
}

Heap::NamedSlot Heap::names_unlink(std::string_view name, std::uint64_t type_hash) {
  if (control_ == nullptr) throw Error(Errc::invalid_argument, "heap: not open");
  refuse_if_read_only("destroy", name);
  NamesLock lock(control_);
  Found f = lookup(*this, name);
  if (f.entry == nullptr) return {};
  if (f.entry->type_hash != type_hash)
    fail(Errc::wrong_kind, "heap '" + this->name() + "', object", name, "it holds another type");
  void* object = object_of(*this, name, f.entry);
  DirectoryChange change(control_);
  publish_link(f.prev == nullptr ? control_->directory_head : f.prev->next, f.entry->next);
  return NamedSlot{object, f.entry, true};
}

void Heap::names_release(const NamedSlot& slot) noexcept {
  (void)deallocate(slot.entry);
}

}  // namespace zipc
