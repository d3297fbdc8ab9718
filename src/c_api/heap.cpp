// c_api/heap.cpp - zipc_heap_* over zipc::Heap, and named blocks of raw bytes.
#include "zipc/heap.hpp"
#include "c_api/c_api.hpp"

struct zipc_heap {  // NOLINT(readability-identifier-naming): the C ABI names it
  zipc::Heap heap;
};

using namespace zipc::c_api;

namespace {

constexpr std::size_t kOptionsV1 = sizeof(zipc_heap_options_t);

// What a C named block stores in the heap's directory: where its bytes are.
// Built under the directory lock (Heap::construct), which may allocate.
struct CNamedBlock {
  std::uint64_t offset = 0;
  std::uint64_t size = 0;
  CNamedBlock(zipc::Heap& heap, std::string_view name, std::size_t bytes, std::size_t align) {
    const zipc::Allocation a = heap.try_allocate(bytes == 0 ? 1 : bytes, align);
    if (a.ptr == nullptr) {
      const bool bad_align = a.status == zipc::HeapStatus::invalid_argument;
      throw zipc::Error(bad_align ? zipc::Errc::invalid_argument : zipc::Errc::out_of_memory,
                        "heap '" + heap.name() + "': named block '" + std::string(name) + "' of " +
                            std::to_string(bytes) + " bytes: " + zipc::to_string(a.status));
    }
    std::memset(a.ptr, 0, bytes);
    offset = heap.offset_of(a.ptr);
    size = bytes;
  }
};

zipc_status_t from(zipc::HeapStatus s) noexcept {
  switch (s) {
    case zipc::HeapStatus::ok: return ZIPC_OK;
    case zipc::HeapStatus::out_of_memory: return ZIPC_OUT_OF_MEMORY;
    case zipc::HeapStatus::invalid_argument: return ZIPC_INVALID_ARGUMENT;
    case zipc::HeapStatus::double_free: return ZIPC_DOUBLE_FREE;
    case zipc::HeapStatus::foreign_pointer: return ZIPC_FOREIGN_POINTER;
    case zipc::HeapStatus::corrupt_header: return ZIPC_CORRUPT_BLOCK;
    case zipc::HeapStatus::corrupt: return ZIPC_CORRUPT;
    case zipc::HeapStatus::detached: return ZIPC_DETACHED;
  }
  return ZIPC_CORRUPT;
}

zipc::HeapOptions to_cpp(const zipc_heap_options_t& o) {
  if (o.address_mode > ZIPC_ADDRESS_FIXED) {
    throw zipc::Error(zipc::Errc::invalid_argument,
                      "heap options: address_mode " + std::to_string(o.address_mode) + " is not 0 or 1");
  }
  zipc::HeapOptions h;
  h.address_mode = static_cast<zipc::AddressMode>(o.address_mode);
  h.address = o.address;
  h.segment = zipc::c_api::to_cpp(o.segment);
  return h;
}

bool setup_args(const char* fn, const char* name, const zipc_heap_options_t* options, zipc_heap_t** out,
                zipc_heap_options_t* opt, zipc_status_t* status) {
  if (!valid_name(fn, name, status)) return false;
  if (out == nullptr) {
    *status = invalid(fn, "out is NULL");
    return false;
  }
  if (!options_ok(fn, options, kOptionsV1, status)) return false;
  *opt = read_options(options, zipc_heap_options_init);
  return true;
}

// The bytes of a named block, bounds-checked (a peer may have written anything).
void* block_of(const zipc::Heap& heap, const CNamedBlock& b) noexcept {
  if (b.offset >= heap.arena_size() || heap.arena_size() - b.offset < b.size) return nullptr;
  return heap.arena() + b.offset;
}

zipc_status_t named(const char* fn, zipc_heap_t* heap, const char* name, size_t size, size_t align, void** out,
                    bool* created, bool may_exist) {
  if (heap == nullptr) return invalid(fn, "heap is NULL");
  if (name == nullptr) return invalid(fn, "name is NULL");
  if (out == nullptr) return invalid(fn, "out is NULL");
  return guard(fn, [&] {
    zipc::Heap& h = heap->heap;
    const std::size_t a = align == 0 ? 16 : align;
    CNamedBlock* existing = may_exist ? h.find<CNamedBlock>(name) : nullptr;
    CNamedBlock* b = existing;
    if (b == nullptr) {
      b = may_exist ? h.find_or_construct<CNamedBlock>(name, h, name, size, a)
                    : h.construct<CNamedBlock>(name, h, name, size, a);
    }
    void* p = block_of(h, *b);
    if (p == nullptr)
      return fail(ZIPC_CORRUPT, "heap '" + h.name() + "': named block '" + name + "' lies outside the arena");
    if (created != nullptr) *created = existing == nullptr;
    *out = p;
    return ZIPC_OK;
  });
}

}  // namespace

extern "C" {

zipc_status_t zipc_heap_options_init(zipc_heap_options_t* options) {
  if (options == nullptr) return invalid("zipc_heap_options_init", "options is NULL");
  std::memset(options, 0, sizeof *options);
  options->struct_size = sizeof *options;
  options->address_mode = ZIPC_ADDRESS_ANY;
  options->address = nullptr;
  zipc_segment_options_init(&options->segment);
  return ZIPC_OK;
}

zipc_status_t zipc_heap_create(const char* name, uint64_t size, const zipc_heap_options_t* options, zipc_heap_t** out) {
  return guard("zipc_heap_create", [&] {
    zipc_status_t st = ZIPC_OK;
    zipc_heap_options_t o;
    if (!setup_args("zipc_heap_create", name, options, out, &o, &st)) return st;
    *out = new zipc_heap{zipc::Heap::create(name, size, to_cpp(o))};
    return ZIPC_OK;
  });
}

zipc_status_t zipc_heap_open(const char* name, const zipc_heap_options_t* options, zipc_heap_t** out) {
  return guard("zipc_heap_open", [&] {
    zipc_status_t st = ZIPC_OK;
    zipc_heap_options_t o;
    if (!setup_args("zipc_heap_open", name, options, out, &o, &st)) return st;
    *out = new zipc_heap{zipc::Heap::open(name, to_cpp(o))};
    return ZIPC_OK;
  });
}

zipc_status_t zipc_heap_open_or_create(const char* name, uint64_t size, const zipc_heap_options_t* options,
                                       zipc_heap_t** out, bool* created) {
  return guard("zipc_heap_open_or_create", [&] {
    zipc_status_t st = ZIPC_OK;
    zipc_heap_options_t o;
    if (!setup_args("zipc_heap_open_or_create", name, options, out, &o, &st)) return st;
    bool made = false;
    zipc::Heap h = zipc::Heap::open_or_create(name, size, to_cpp(o), &made);
    if (created != nullptr) *created = made;
    *out = new zipc_heap{std::move(h)};
    return ZIPC_OK;
  });
}

zipc_status_t zipc_heap_remove(const char* name, const zipc_segment_options_t* segment) {
  return guard("zipc_heap_remove", [&] {
    zipc_status_t st = ZIPC_OK;
    if (!valid_name("zipc_heap_remove", name, &st)) return st;
    zipc_segment_options_t seg;
    zipc_segment_options_init(&seg);
    if (segment != nullptr) seg = *segment;
    if (zipc::Heap::remove(name, zipc::c_api::to_cpp(seg))) return ZIPC_OK;
    return fail(ZIPC_NOT_FOUND, std::string("heap '") + name + "': not found");
  });
}

zipc_status_t zipc_heap_detach(zipc_heap_t* heap) {
  delete heap;
  return ZIPC_OK;
}

zipc_status_t zipc_heap_allocate(zipc_heap_t* heap, size_t size, size_t align, void** out) {
  if (heap == nullptr) return invalid("zipc_heap_allocate", "heap is NULL");
  if (out == nullptr) return invalid("zipc_heap_allocate", "out is NULL");
  const zipc::Allocation a = heap->heap.try_allocate(size, align == 0 ? 16 : align);
  if (a.status == zipc::HeapStatus::invalid_argument) {
    return invalid("zipc_heap_allocate", "align must be a power of two up to 4096");
  }
  if (a.ptr == nullptr) return a.status == zipc::HeapStatus::ok ? ZIPC_OUT_OF_MEMORY : from(a.status);
  *out = a.ptr;
  return ZIPC_OK;
}

zipc_status_t zipc_heap_free(zipc_heap_t* heap, void* p) {
  if (heap == nullptr) return invalid("zipc_heap_free", "heap is NULL");
  return from(heap->heap.deallocate(p));
}

zipc_status_t zipc_heap_offset_of(const zipc_heap_t* heap, const void* p, uint64_t* offset) {
  if (heap == nullptr) return invalid("zipc_heap_offset_of", "heap is NULL");
  if (offset == nullptr) return invalid("zipc_heap_offset_of", "offset is NULL");
  const std::uint64_t off = heap->heap.offset_of(p);
  if (off == zipc::Heap::kNoOffset) return invalid("zipc_heap_offset_of", "the pointer is outside the heap's arena");
  *offset = off;
  return ZIPC_OK;
}

zipc_status_t zipc_heap_at(const zipc_heap_t* heap, uint64_t offset, size_t size, void** out) {
  if (heap == nullptr) return invalid("zipc_heap_at", "heap is NULL");
  if (out == nullptr) return invalid("zipc_heap_at", "out is NULL");
  const zipc::Heap& h = heap->heap;
  if (offset >= h.arena_size() || h.arena_size() - offset < size) {
    return invalid("zipc_heap_at", "[offset, offset + size) is outside the heap's arena");
  }
  *out = h.arena() + offset;
  return ZIPC_OK;
}

zipc_status_t zipc_heap_arena(const zipc_heap_t* heap, void** base, uint64_t* size) {
  if (heap == nullptr) return invalid("zipc_heap_arena", "heap is NULL");
  if (base == nullptr || size == nullptr) return invalid("zipc_heap_arena", "base or size is NULL");
  *base = heap->heap.arena();
  *size = heap->heap.arena_size();
  return ZIPC_OK;
}

zipc_status_t zipc_heap_stats(const zipc_heap_t* heap, zipc_heap_stats_t* out) {
  if (heap == nullptr) return invalid("zipc_heap_stats", "heap is NULL");
  if (out == nullptr) return invalid("zipc_heap_stats", "out is NULL");
  const zipc::HeapStats s = heap->heap.stats();
  *out = {s.size, s.free_bytes, s.largest_free_block, s.allocated_blocks, s.repairs, s.corrupt};
  return ZIPC_OK;
}

zipc_status_t zipc_heap_check(const zipc_heap_t* heap) {
  if (heap == nullptr) return invalid("zipc_heap_check", "heap is NULL");
  return guard("zipc_heap_check", [&] {
    const zipc::HeapCheck c = heap->heap.check();
    if (c.ok) return ZIPC_OK;
    return fail(ZIPC_CORRUPT, "heap '" + heap->heap.name() + "': " + c.problem);
  });
}

zipc_status_t zipc_heap_named_create(zipc_heap_t* heap, const char* name, size_t size, size_t align, void** out) {
  return named("zipc_heap_named_create", heap, name, size, align, out, nullptr, false);
}

zipc_status_t zipc_heap_named_find_or_create(zipc_heap_t* heap, const char* name, size_t size, size_t align, void** out,
                                             bool* created) {
  return named("zipc_heap_named_find_or_create", heap, name, size, align, out, created, true);
}

zipc_status_t zipc_heap_named_find(zipc_heap_t* heap, const char* name, void** out, size_t* size) {
  if (heap == nullptr) return invalid("zipc_heap_named_find", "heap is NULL");
  if (name == nullptr) return invalid("zipc_heap_named_find", "name is NULL");
  if (out == nullptr) return invalid("zipc_heap_named_find", "out is NULL");
  return guard("zipc_heap_named_find", [&] {
    zipc::Heap& h = heap->heap;
    const CNamedBlock* b = h.find<CNamedBlock>(name);
    if (b == nullptr) return fail(ZIPC_NOT_FOUND, "heap '" + h.name() + "': no named block '" + name + "'");
    void* p = block_of(h, *b);
    if (p == nullptr)
      return fail(ZIPC_CORRUPT, "heap '" + h.name() + "': named block '" + name + "' lies outside the arena");
    *out = p;
    if (size != nullptr) *size = b->size;
    return ZIPC_OK;
  });
}

zipc_status_t zipc_heap_named_destroy(zipc_heap_t* heap, const char* name) {
  if (heap == nullptr) return invalid("zipc_heap_named_destroy", "heap is NULL");
  if (name == nullptr) return invalid("zipc_heap_named_destroy", "name is NULL");
  return guard("zipc_heap_named_destroy", [&] {
    zipc::Heap& h = heap->heap;
    const CNamedBlock* b = h.find<CNamedBlock>(name);
    if (b == nullptr) return fail(ZIPC_NOT_FOUND, "heap '" + h.name() + "': no named block '" + name + "'");
    void* p = block_of(h, *b);
    if (!h.destroy<CNamedBlock>(name))
      return fail(ZIPC_NOT_FOUND, "heap '" + h.name() + "': no named block '" + name + "'");
    return p == nullptr ? ZIPC_OK : from(h.deallocate(p));
  });
}

}  // extern "C"
