#include "zipc/segment.hpp"

#include <fcntl.h>

#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <utility>

#include "core/fail.hpp"
#include "core/liveness_file.hpp"
#include "core/round_up.hpp"
#include "core/type_record.hpp"
#include "layout/segment_header.hpp"
#include "platform/clock.hpp"
#include "platform/fd_passing.hpp"
#include "platform/file.hpp"
#include "platform/process.hpp"
#include "segment/segment_header.hpp"
#include "segment/segment_space.hpp"
#include "zipc/log.hpp"

namespace zipc {

const char* to_string(SegmentKind k) noexcept {
  switch (k) {
    case SegmentKind::any: return "segment";
    case SegmentKind::queue: return "queue";
    case SegmentKind::topic: return "topic";
    case SegmentKind::rpc: return "rpc";
    case SegmentKind::heap: return "heap";
    case SegmentKind::bench: return "bench";
    case SegmentKind::event: return "event";
    case SegmentKind::topic_reader: return "topic-reader";
    case SegmentKind::user: return "user";
  }
  return static_cast<std::uint32_t>(k) > static_cast<std::uint32_t>(SegmentKind::user) ? "user" : "unknown";
}

namespace {

constexpr const char* kPrefix = detail::kSegmentFilePrefix;
// A segment that is still initializing while nobody holds its creator lock
// for this long was abandoned by a dead creator (covers the instant between
// O_EXCL create and flock).
constexpr std::uint64_t kAbandonedGraceNs = 20'000'000;
constexpr std::uint64_t kMaxTotalSize = std::uint64_t{1} << 46;

// Owns a descriptor until released.
class Fd {
 public:
  explicit Fd(int fd = -1) : fd_(fd) {}
  Fd(const Fd&) = delete;
  Fd& operator=(const Fd&) = delete;
  ~Fd() {
    if (fd_ >= 0) platform::close_fd(fd_);
  }
  int get() const { return fd_; }
  int release() { return std::exchange(fd_, -1); }

 private:
  int fd_;
};

struct HeaderRead {
  detail::HeaderCheck check;
  alignas(layout::SegmentHeader) unsigned char raw[sizeof(layout::SegmentHeader)] = {};
  std::uint64_t file_size = 0;
  std::uint64_t allocated = 0;  // storage the file holds (st_blocks * 512)
  // A private copy: fields read from here cannot change under us.
  const layout::SegmentHeader& header() const { return *reinterpret_cast<const layout::SegmentHeader*>(raw); }
};

HeaderRead read_header(int fd, std::string_view name, SegmentKind kind) {
  HeaderRead out;
  platform::FileStat st;
  if (int r = platform::stat_fd(fd, &st); r < 0) fail_errno(r, "segment", name, "fstat");
  out.file_size = st.size;
  out.allocated = st.allocated;
  const std::size_t want = st.size < sizeof out.raw ? static_cast<std::size_t>(st.size) : sizeof out.raw;
  long got = platform::read_at(fd, out.raw, want, 0);
  if (got < 0) fail_errno(static_cast<int>(got), "segment", name, "read header");
  out.check = detail::check_header(out.raw, static_cast<std::size_t>(got), st.size, kind);
  return out;
}

// True when nobody holds the creator's exclusive lock on fd.
bool creator_lock_free(int fd) {
  if (platform::lock_fd(fd, /*exclusive=*/false, /*nonblocking=*/true) == 0) {
    platform::unlock_fd(fd);
    return true;
  }
  return false;
}

std::string describe_creator(const layout::SegmentHeader& h) {
  if (h.creator_pid == 0) return "creator unknown";
  return "creator pid " + std::to_string(h.creator_pid);
}

}  // namespace

// Fills a Segment's private fields; the only friend.
struct SegmentAccess {
  static void map_into(Segment& s, int fd, std::string_view name, const std::string& path,
                       const layout::SegmentHeader& h, const SegmentOptions& o, bool keep_fd) {
    platform::MapRequest req;
    req.size = h.total_size;
    req.populate = o.prefault;
    req.fixed_address = o.fixed_address;
    req.read_only = o.read_only;
    int err = 0;
    void* p = platform::map_fd(fd, req, &err);
    if (p == nullptr) {
      if (err == -EEXIST) {
        fail(Errc::address_unavailable, "segment", name,
             "address " + std::to_string(reinterpret_cast<std::uintptr_t>(o.fixed_address)) +
                 " is already in use in this process");
      }
      fail_errno(err, "segment", name, "mmap");
    }
    s.base_ = static_cast<std::byte*>(p);
    s.size_ = h.total_size;
    s.payload_offset_ = h.payload_offset;
    s.payload_size_ = h.payload_size;
    s.name_ = std::string(name);
    s.path_ = path;
    s.kind_ = static_cast<SegmentKind>(h.kind);
    for (std::size_t i = 0; i < layout::kParamCount; ++i) s.params_[i] = h.params[i];
    s.creator_ = ProcessId{static_cast<std::int32_t>(h.creator_pid), h.creator_start_time};
    if (keep_fd) s.fd_ = fd;
    s.read_only_ = o.read_only;
    apply_options(s, o);
  }

  static void apply_options(Segment& s, const SegmentOptions& o) {
    if (o.huge_pages != HugePages::off) {
      if (int r = platform::advise(s.base_, s.size_, platform::Advice::huge_pages); r < 0) {
        if (o.huge_pages == HugePages::require) {
          const std::string why = "huge pages unavailable: " + platform::error_text(-r);
          s.detach();
          fail(Errc::invalid_argument, "segment", s.name_, why);
        }
        s.notes_ += "huge pages unavailable (" + platform::error_text(-r) + "), using small pages; ";
      }
    }
    if (o.lock_memory) {
      if (int r = platform::lock_pages(s.base_, s.size_); r < 0) {
        s.notes_ += "mlock failed (" + platform::error_text(-r) + "); ";
      }
    }
  }

  static layout::SegmentHeader* header(Segment& s) { return reinterpret_cast<layout::SegmentHeader*>(s.base_); }
  static void set_created(Segment& s) { s.created_here_ = true; }
};

Segment Segment::create(std::string_view name, const SegmentSpec& spec, const InitFn& init,
                        const SegmentOptions& options) {
  validate_name(name);
  if (spec.kind == SegmentKind::any) fail(Errc::invalid_argument, "segment", name, "create needs a concrete kind");
  if (options.mode & ~0777u) fail(Errc::invalid_argument, "segment", name, "mode has bits outside 0777");
  if (options.read_only)
    fail(Errc::invalid_argument, "segment", name, "read_only is for open(): a creator writes the segment");
  const std::uint64_t total = layout::kPayloadOffset + round_up(spec.payload_size, platform::page_size());
  if (spec.payload_size > kMaxTotalSize || total > kMaxTotalSize) {
    fail(Errc::invalid_argument, "segment", name, "size " + std::to_string(spec.payload_size) + " is over 64 TiB");
  }
  const std::string path = path_for(name, options);
  if (!options.memfd && options.path.empty()) detail::prepare_liveness_file();  // /dev/shm is shared
  Fd fd(options.memfd ? platform::create_memfd(std::string(kPrefix) + std::string(name))
                      : platform::open_file(path, O_RDWR | O_CREAT | O_EXCL, options.mode));
  if (fd.get() < 0) fail_errno(fd.get(), "segment", name, "create " + path);
  // Held until init_state is stored: openers that can take this lock while
  // the segment is not ready know the creator died.
  platform::lock_fd(fd.get(), /*exclusive=*/true, /*nonblocking=*/false);

  Segment seg;
  try {
    if (!options.group.empty()) {
      std::uint32_t gid = 0;
      if (int r = platform::resolve_group(options.group, &gid); r < 0) {
        fail_errno(r, "segment", name, "group '" + options.group + "'");
      }
      if (int r = platform::chgrp_fd(fd.get(), gid); r < 0)
        fail_errno(r, "segment", name, "give to group '" + options.group + "'");
    }
    // After the group change: fchown may clear mode bits.
    if (int r = platform::chmod_fd(fd.get(), options.mode); r < 0) fail_errno(r, "segment", name, "fchmod");
    if (int r = platform::truncate_fd(fd.get(), total); r < 0) fail_errno(r, "segment", name, "ftruncate");
    // A full /dev/shm fails here, naming the sizes (of what the kind commits:
    // SegmentSpec::committed_size); the pages themselves are touched by use,
    // or now with prefault (docs/guide/segment.md, "Memory").
    const std::uint64_t checked = spec.committed_size == 0 || spec.committed_size >= spec.payload_size
                                      ? total
                                      : layout::kPayloadOffset + round_up(spec.committed_size, platform::page_size());
    detail::reserve_space(fd.get(), to_string(spec.kind), name, detail::space_label(path, options.memfd), checked,
                          options.prefault);
    if (options.memfd) {
      if (int r = platform::seal_size(fd.get()); r < 0) fail_errno(r, "segment", name, "seal the memfd's size");
    }
    layout::SegmentHeader h{};
    h.magic = layout::kMagic;
    h.layout_version = layout::kLayoutVersion;
    h.kind = static_cast<std::uint32_t>(spec.kind);
    h.total_size = total;
    h.payload_offset = layout::kPayloadOffset;
    h.payload_size = total - layout::kPayloadOffset;
    const ProcessId me = ProcessId::current();
    h.creator_pid = static_cast<std::uint32_t>(me.pid);
    h.creator_uid = platform::current_uid();
    h.creator_start_time = me.start_time;
    h.created_ns = platform::realtime_ns();
    for (std::size_t i = 0; i < layout::kParamCount; ++i) h.params[i] = spec.params[i];
    h.checksum = detail::header_checksum(h);

    SegmentAccess::map_into(seg, fd.get(), name, path, h, options, /*keep_fd=*/false);
    layout::SegmentHeader* live = SegmentAccess::header(seg);
    // Everything but init_state; the file is zero-filled so init_state reads 0.
    std::memcpy(static_cast<void*>(live), &h, offsetof(layout::SegmentHeader, init_state));
    if (options.type) detail::write_type_record(seg.base(), *options.type);  // published by init_state
    if (init) init(seg.payload(), seg.payload_size());
    // release: publishes the header and everything init() wrote; openers
    // load it with acquire (via pread after the store is globally visible).
    live->init_state.store(layout::kInitReady, std::memory_order_release);
  } catch (...) {
    seg.detach();
    if (!options.memfd) platform::unlink_path(path);
    throw;
  }
  SegmentAccess::set_created(seg);
  platform::unlock_fd(fd.get());
  if (!options.path.empty() || options.memfd) seg.fd_ = fd.release();
  return seg;
}

Segment Segment::open(std::string_view name, SegmentKind kind, const SegmentOptions& options) {
  validate_name(name);
  if (options.memfd) fail(Errc::invalid_argument, "segment", name, "a memfd segment has no name to open; use open_fd");
  const std::string path = path_for(name, options);
  Fd fd(platform::open_file(path, options.read_only ? O_RDONLY : O_RDWR, 0));
  if (fd.get() < 0)
    fail_errno(fd.get(), "segment", name, std::string(options.read_only ? "open (read-only) " : "open ") + path);
  if (options.path.empty()) detail::prepare_liveness_file();  // /dev/shm is shared

  const std::uint64_t start = platform::monotonic_ns();
  const std::uint64_t timeout_ns = static_cast<std::uint64_t>(options.open_timeout.count()) * 1'000'000ull;
  std::uint64_t lock_free_since = 0;
  std::uint64_t pause_ns = 50'000;
  for (;;) {
    HeaderRead hr = read_header(fd.get(), name, kind);
    if (hr.check.state == detail::HeaderState::ready) {
      // prefault: the pages no one touched yet are allocated before MAP_POPULATE maps
      // them, so a full /dev/shm is an error here rather than a SIGBUS later.
      if (options.prefault && !options.read_only) {
        detail::reserve_space(fd.get(), to_string(static_cast<SegmentKind>(hr.header().kind)), name,
                              detail::space_label(path, false), hr.header().total_size, true);
      }
      Segment seg;
      SegmentAccess::map_into(seg, fd.get(), name, path, hr.header(), options, false);
      // acquire: pairs with the creator's release store of init_state, so the
      // payload the creator built is visible through our mapping.
      if (SegmentAccess::header(seg)->init_state.load(std::memory_order_acquire) != layout::kInitReady) {
        fail(Errc::corrupt_header, "segment", name, "init_state changed while opening");
      }
      if (options.type) detail::check_type(name, seg.type_identity(), *options.type);
      if (!options.path.empty()) seg.fd_ = fd.release();
      return seg;
    }
    if (hr.check.state == detail::HeaderState::invalid) {
      detail::log_message(LogLevel::warn, name, std::string("refused: ") + hr.check.why);
      fail(hr.check.errc, "segment", name, hr.check.why);
    }

    // Still initializing: is the creator alive?
    const std::uint64_t now = platform::monotonic_ns();
    if (creator_lock_free(fd.get())) {
      if (lock_free_since == 0) lock_free_since = now;
      if (now - lock_free_since >= kAbandonedGraceNs) {
        fail(Errc::creator_died, "segment", name,
             describe_creator(hr.header()) + " exited before initialization finished");
      }
    } else {
      lock_free_since = 0;
    }
    if (now - start >= timeout_ns && (lock_free_since == 0 || now - lock_free_since >= kAbandonedGraceNs)) {
      fail(Errc::init_timeout, "segment", name,
           describe_creator(hr.header()) + " still initializing after " + std::to_string(options.open_timeout.count()) +
               " ms");
    }
    platform::sleep_ns(pause_ns);
    if (pause_ns < 2'000'000) pause_ns *= 2;
  }
}

Segment Segment::open_fd(int fd, SegmentKind kind, const SegmentOptions& options, std::string_view name) {
  Fd own(platform::dup_fd(fd));
  if (own.get() < 0) fail_errno(own.get(), "segment", name, "duplicate descriptor " + std::to_string(fd));
  if (!options.read_only && platform::is_read_only_fd(own.get()) == 1) {
    fail(Errc::permission_denied, "segment", name,
         "descriptor " + std::to_string(fd) + " is read-only: open it with SegmentOptions::read_only");
  }
  HeaderRead hr = read_header(own.get(), name, kind);
  if (hr.check.state == detail::HeaderState::invalid) fail(hr.check.errc, "segment", name, hr.check.why);
  if (hr.check.state != detail::HeaderState::ready) {
    // A descriptor is handed on after create() returned, so this is no race
    // to wait out: the creator died or the descriptor is not a finished segment.
    fail(Errc::creator_died, "segment", name, describe_creator(hr.header()) + ": the segment was never finished");
  }
  if (options.prefault && !options.read_only) {  // as in open()
    detail::reserve_space(own.get(), to_string(static_cast<SegmentKind>(hr.header().kind)), name, "fd",
                          hr.header().total_size, true);
  }
  Segment seg;
  SegmentAccess::map_into(seg, own.get(), name, "fd:" + std::to_string(fd), hr.header(), options, false);
  // acquire: pairs with the creator's release store of init_state.
  if (SegmentAccess::header(seg)->init_state.load(std::memory_order_acquire) != layout::kInitReady) {
    fail(Errc::corrupt_header, "segment", name, "init_state changed while opening");
  }
  seg.fd_ = own.release();
  return seg;
}

namespace {

// Removes an abandoned segment, unless someone replaced it meanwhile.
void reclaim_abandoned(std::string_view name, const std::string& path) {
  Fd fd(platform::open_file(path, O_RDWR, 0));
  if (fd.get() < 0) return;  // gone already
  // Reclaimers serialize on the dead file's lock; a live creator holds it.
  if (platform::lock_fd(fd.get(), /*exclusive=*/true, /*nonblocking=*/true) != 0) return;
  platform::FileStat mine, now;
  if (platform::stat_fd(fd.get(), &mine) == 0 && platform::stat_path(path, &now) == 0 && mine.inode == now.inode &&
      mine.device == now.device) {
    HeaderRead hr = read_header(fd.get(), name, SegmentKind::any);
    if (hr.check.state != detail::HeaderState::ready) platform::unlink_path(path);
  }
}

}  // namespace

Segment Segment::open_or_create(std::string_view name, const SegmentSpec& spec, const InitFn& init,
                                const SegmentOptions& options, bool* created) {
  validate_name(name);
  if (options.read_only)
    fail(Errc::invalid_argument, "segment", name, "read_only is for open(): open_or_create may create");
  if (options.memfd) {  // a new memfd is never an existing segment
    if (created) *created = true;
    return create(name, spec, init, options);
  }
  const std::string path = path_for(name, options);
  for (int attempt = 0;; ++attempt) {
    try {
      Segment s = open(name, spec.kind, options);
      if (created) *created = false;
      return s;
    } catch (const Error& e) {
      if (attempt >= 1000) throw;
      if (e.errc() == Errc::creator_died) {
        reclaim_abandoned(name, path);
        continue;
      }
      if (e.errc() != Errc::not_found) throw;
    }
    try {
      Segment s = create(name, spec, init, options);
      if (created) *created = true;
      return s;
    } catch (const Error& e) {
      if (e.errc() != Errc::already_exists) throw;
    }
  }
}

bool Segment::remove(std::string_view name, const SegmentOptions& options) {
  validate_name(name);
  const std::string path = path_for(name, options);
  if (options.memfd) return false;  // nothing to unlink: gone with its last descriptor
  int r = platform::unlink_path(path);
  if (r == 0) return true;
  if (r == -ENOENT) return false;
  fail_errno(r, "segment", name, "unlink " + path);
}

SegmentInfo Segment::inspect(std::string_view name, const SegmentOptions& options) {
  validate_name(name);
  if (options.memfd) fail(Errc::invalid_argument, "segment", name, "a memfd segment has no name to inspect");
  SegmentInfo info;
  info.name = std::string(name);
  info.path = path_for(name, options);
  Fd fd(platform::open_file(info.path, O_RDONLY, 0));
  if (fd.get() < 0) fail_errno(fd.get(), "segment", name, "open " + info.path);
  HeaderRead hr = read_header(fd.get(), name, SegmentKind::any);
  info.size = hr.file_size;
  info.allocated = hr.allocated;
  info.valid = hr.check.state == detail::HeaderState::ready;
  if (hr.check.state == detail::HeaderState::initializing) {
    info.problem = creator_lock_free(fd.get()) ? "abandoned during initialization" : "initializing";
  } else if (!info.valid) {
    info.problem = hr.check.why;
  }
  if (info.valid || hr.header().magic == layout::kMagic) {
    info.kind = static_cast<SegmentKind>(hr.header().kind);
    info.creator = ProcessId{static_cast<std::int32_t>(hr.header().creator_pid), hr.header().creator_start_time};
    info.creator_alive = is_alive(info.creator);
    info.created_ns = hr.header().created_ns;
    for (std::size_t i = 0; i < layout::kParamCount; ++i) info.params[i] = hr.header().params[i];
  }
  if (info.valid && hr.file_size >= layout::kTypeRecordOffset + sizeof(layout::TypeRecord)) {
    layout::TypeRecord r{};
    if (platform::read_at(fd.get(), &r, sizeof r, layout::kTypeRecordOffset) == static_cast<long>(sizeof r)) {
      TypeIdentity t;
      std::string why;
      const detail::TypeRecordState st = detail::read_type_record(r, &t, &why);
      if (st == detail::TypeRecordState::valid) info.type = std::move(t);
      if (st == detail::TypeRecordState::invalid) info.problem = "type record: " + why;
    }
  }
  return info;
}

std::vector<SegmentInfo> Segment::list() {
  std::vector<SegmentInfo> out;
  for (const std::string& file : platform::list_dir(platform::kShmDir, kPrefix)) {
    const std::string name = file.substr(std::strlen(kPrefix));
    try {
      SegmentOptions exact;
      exact.name_space = std::string();  // the file name already carries any name space
      out.push_back(inspect(name, exact));
    } catch (const Error& e) {
      SegmentInfo info;
      info.name = name;
      info.path = std::string(platform::kShmDir) + "/" + file;
      info.problem = e.what();
      out.push_back(std::move(info));
    }
  }
  return out;
}

}  // namespace zipc
