// The named-object directory of a zipc::Heap: a singly linked list of
// entries in the arena, guarded by HeapControl::names_lock. Every change is
// published by one 8-byte store (the head, or one entry's next), so a
// process dying mid-change leaves the list whole (at worst a leaked entry).
#include <cstring>

#include "fail.hpp"
#include "heap_lock.hpp"
#include "heap_tlsf.hpp"
#include "layout/heap_layout.hpp"
#include "round_up.hpp"
#include "zipc/heap.hpp"

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

}  // namespace

Heap::NamedSlot Heap::names_begin(std::string_view name, std::uint64_t type_hash, std::size_t size, std::size_t align,
                                  bool may_exist) {
  if (control_ == nullptr) throw Error(Errc::invalid_argument, "heap: not open");
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
  control_->directory_head = offset_of(slot.entry);
  detail::owner_unlock(control_->names_lock);
}

void Heap::names_abort(const NamedSlot& slot) noexcept {
  (void)deallocate(slot.entry);
  detail::owner_unlock(control_->names_lock);
}

void* Heap::names_find(std::string_view name, std::uint64_t type_hash) {
  if (control_ == nullptr) throw Error(Errc::invalid_argument, "heap: not open");
  NamesLock lock(control_);
  Found f = lookup(*this, name);
  if (f.entry == nullptr) return nullptr;
  if (f.entry->type_hash != type_hash)
    fail(Errc::wrong_kind, "heap '" + this->name() + "', object", name, "it holds another type");
  return object_of(*this, name, f.entry);
}

Heap::NamedSlot Heap::names_unlink(std::string_view name, std::uint64_t type_hash) {
  if (control_ == nullptr) throw Error(Errc::invalid_argument, "heap: not open");
  NamesLock lock(control_);
  Found f = lookup(*this, name);
  if (f.entry == nullptr) return {};
  if (f.entry->type_hash != type_hash)
    fail(Errc::wrong_kind, "heap '" + this->name() + "', object", name, "it holds another type");
  void* object = object_of(*this, name, f.entry);
  if (f.prev == nullptr) {
    control_->directory_head = f.entry->next;
  } else {
    f.prev->next = f.entry->next;
  }
  return NamedSlot{object, f.entry, true};
}

void Heap::names_release(const NamedSlot& slot) noexcept {
  (void)deallocate(slot.entry);
}

}  // namespace zipc
