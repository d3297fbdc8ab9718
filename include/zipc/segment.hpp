/// \file
/// zipc/segment.hpp - a named shared-memory region with a validated header.
///
/// \code
///   zipc::SegmentSpec spec{zipc::SegmentKind::user, 1 << 20, {}};
///   auto seg = zipc::Segment::create("demo", spec, [](std::byte* p, std::size_t n) {
///     std::memset(p, 0, n);  // build the shared structure; openers see it only after this returns
///   });
///   auto same = zipc::Segment::open("demo", zipc::SegmentKind::user);
///   zipc::Segment::remove("demo");
/// \endcode
///
/// Segments live in /dev/shm as "zipc.<name>" (POSIX shm), or at a file path
/// (SegmentOptions::path) for a log that survives restarts. Every segment starts
/// with a header (src/layout/segment_header.hpp); open validates it against the
/// real file size before anything else is touched.
#pragma once

#include <array>
#include <chrono>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "zipc/error.hpp"
#include "zipc/process.hpp"
#include "zipc/type_identity.hpp"

namespace zipc {

/// What a segment holds; recorded in its header, checked by every open.
enum class SegmentKind : std::uint32_t {
  any = 0,           ///< open(): accept every kind
  queue = 1,         ///< a zipc::Queue
  topic = 2,         ///< a zipc::Topic
  rpc = 3,           ///< an Rpc service (RpcServer / RpcClient)
  heap = 4,          ///< a zipc::Heap
  bench = 5,         ///< a benchmark's own segment
  event = 6,         ///< a named event channel (zipc/event_channel.hpp)
  topic_reader = 7,  ///< the position of a read-only reliable topic subscriber (docs/design/topic.md)
  user = 100,        ///< for applications' own layouts
};
/// The kind's name: "queue", "topic", "rpc", ...
const char* to_string(SegmentKind k) noexcept;

/// Whether a segment asks for transparent huge pages.
enum class HugePages : std::uint8_t {
  off = 0,  ///< small pages only (default)
  prefer,   ///< ask for transparent huge pages; fall back to small pages (see Segment::notes)
  require,  ///< fail with Errc::invalid_argument when they cannot be had
};

/// Who may open a segment.
namespace mode {
inline constexpr unsigned owner = 0600;     ///< default
inline constexpr unsigned group = 0660;     ///< the owner and its group read and write
inline constexpr unsigned everyone = 0666;  ///< every user reads and writes
/// The owner writes; others only read (open with SegmentOptions::read_only).
inline constexpr unsigned group_reads = 0640;
inline constexpr unsigned everyone_reads =
    0644;  ///< the owner writes, everyone reads (open with SegmentOptions::read_only)
}  // namespace mode

/// Where a segment lives, who may open it and how it is mapped; every channel's options carry one.
struct SegmentOptions {
  std::string path;             ///< non-empty: a file at this path instead of /dev/shm/zipc.\<name\>
  unsigned mode = mode::owner;  ///< permission bits for create
  /// Group owner for create: a group name or a numeric gid ("" keeps the
  /// creator's group). Pair it with mode::group to share with that group.
  /// Errc::not_found for an unknown group; Errc::permission_denied when the
  /// creator may not give the file to that group (not a member, not root).
  std::string group;
  /// Commit the whole segment at create/open: allocate every page in
  /// /dev/shm (posix_fallocate) and map it in (MAP_POPULATE). Without it
  /// pages cost memory only once touched (docs/guide/segment.md, "Memory"): create
  /// checks that /dev/shm has room for the whole segment, but a page touched
  /// later, after other processes filled /dev/shm, raises SIGBUS. With it a
  /// full /dev/shm fails create/open with Errc::out_of_memory instead, and
  /// the first touches cost no page faults.
  bool prefault = false;
  HugePages huge_pages = HugePages::off;         ///< transparent huge pages (off, prefer, require)
  bool lock_memory = false;                      ///< mlock the mapping (needs RLIMIT_MEMLOCK)
  std::chrono::milliseconds open_timeout{1000};  ///< how long open waits for a creator to finish
  void* fixed_address = nullptr;                 ///< map exactly here, or fail with address_unavailable
  /// Name space: segment "x" lives at /dev/shm/zipc.\<name_space\>:x, so equal
  /// names in different name spaces are different channels. Unset: the
  /// environment variable ZIPC_NAMESPACE, and when that is unset or empty, no
  /// name space (/dev/shm/zipc.x, the default). Set to "": no name space even
  /// when ZIPC_NAMESPACE is set. Letters, digits, '_' and '-' only. A name of
  /// the form "ns:x" names its name space itself and ignores this field.
  std::optional<std::string> name_space;
  /// create(): the segment lives in an anonymous memfd instead of /dev/shm or
  /// a path; nothing else can open it by name. Hand Segment::fd() to another
  /// process (zipc::send_fd over a Unix socket) which opens it with open_fd().
  bool memfd = false;
  /// Typed channels (zipc/typed.hpp): create records this identity in the
  /// segment; open refuses a segment holding another one, or none, with
  /// Errc::type_mismatch. Empty: no type is recorded or checked.
  std::optional<TypeIdentity> type;
  /// open() and open_fd(): map the segment read-only (O_RDONLY, PROT_READ), so
  /// read permission on the file is enough and nothing this process does can
  /// change the segment: a stray write faults in this process only. Only what
  /// reads without writing works on such a handle (docs/guide/containers-and-permissions.md, "Read-only
  /// participants"): lossy topic subscribers, introspection. create() and
  /// open_or_create() refuse it (Errc::invalid_argument).
  bool read_only = false;
};

/// What to create: the kind, the bytes the kind needs, and its parameters
/// (recorded in the header and covered by its checksum).
struct SegmentSpec {
  SegmentKind kind = SegmentKind::user;   ///< what the segment holds
  std::uint64_t payload_size = 0;         ///< bytes the kind needs after the header
  std::array<std::uint64_t, 8> params{};  ///< the kind's parameters (its geometry)
  /// Payload bytes create checks room for (and commits with prefault); 0:
  /// payload_size. Less for a kind that commits the rest of its mapping later
  /// itself (the rpc block pool, docs/design/rpc.md "Large payloads").
  std::uint64_t committed_size = 0;
};

/// Builds the payload in place. Runs once, in the creating process, before any
/// opener can see the segment as ready. May throw; the segment is then removed.
using InitFn = std::function<void(std::byte* payload, std::size_t size)>;

/// A segment's header facts, read without attaching (Segment::list, Segment::inspect).
struct SegmentInfo {
  std::string name;                     ///< the segment's name
  std::string path;                     ///< its file
  SegmentKind kind = SegmentKind::any;  ///< what it holds
  std::uint64_t size = 0;               ///< bytes every participant maps
  /// Bytes of memory (or disk, for a file on one) the segment holds now: the
  /// pages someone has touched, or all of them after prefault. What `du`
  /// shows and what a full /dev/shm counts (st_blocks * 512).
  std::uint64_t allocated = 0;
  ProcessId creator;                      ///< the process that created it
  bool creator_alive = false;             ///< that process still runs
  std::uint64_t created_ns = 0;           ///< CLOCK_REALTIME
  std::array<std::uint64_t, 8> params{};  ///< the kind's parameters (its geometry)
  bool valid = false;                     ///< header validated
  std::string problem;                    ///< why not valid
  std::optional<TypeIdentity> type;       ///< the typed channel's message type, when one was recorded
};

/// A named, validated shared-memory mapping: a header (kind, layout version, creator, parameters, checksum) and the
/// kind's payload. Every channel lives in one; applications may make their own (SegmentKind::user).
class Segment {
 public:
  /// The longest segment name, bytes.
  static constexpr std::size_t kMaxNameLength = 200;

  /// Creates a new segment; Errc::already_exists if the name is taken.
  static Segment create(std::string_view name, const SegmentSpec& spec, const InitFn& init,
                        const SegmentOptions& options = {});
  /// Opens an existing segment and validates it; kind may be SegmentKind::any.
  static Segment open(std::string_view name, SegmentKind kind, const SegmentOptions& options = {});
  /// Opens, or creates when absent. Race-free: with many callers at once exactly
  /// one creates and all end with the same valid segment. A segment whose
  /// creator died before finishing initialization is removed and re-created.
  /// *created (if given) tells which happened.
  static Segment open_or_create(std::string_view name, const SegmentSpec& spec, const InitFn& init,
                                const SegmentOptions& options = {}, bool* created = nullptr);
  /// Opens a segment from a descriptor (a memfd or an open segment file, e.g.
  /// received with zipc::receive_fd). The descriptor is duplicated: the caller
  /// keeps and closes its own. name only labels errors and name().
  static Segment open_fd(int fd, SegmentKind kind, const SegmentOptions& options = {}, std::string_view name = "fd");
  /// Removes the name (mappings stay valid until unmapped). False if absent.
  static bool remove(std::string_view name, const SegmentOptions& options = {});
  /// Every zipc segment in /dev/shm, with its header read (not mapped writable).
  static std::vector<SegmentInfo> list();
  /// Reads one segment's header without keeping it open.
  static SegmentInfo inspect(std::string_view name, const SegmentOptions& options = {});

  /// Throws Errc::invalid_name with the reason when name is not usable.
  static void validate_name(std::string_view name);
  /// The name space that applies (options.name_space, else ZIPC_NAMESPACE);
  /// "" for none. Throws Errc::invalid_name for an unusable name space.
  static std::string name_space_for(const SegmentOptions& options = {});
  /// Where a name lives: /dev/shm/zipc.\<name\>, /dev/shm/zipc.\<ns\>:\<name\>, or options.path.
  static std::string path_for(std::string_view name, const SegmentOptions& options = {});

  Segment() = default;
  /// Moves the mapping; the source is left detached.
  Segment(Segment&& other) noexcept;
  /// Unmaps this one, then moves other's mapping; other is left detached.
  Segment& operator=(Segment&& other) noexcept;
  Segment(const Segment&) = delete;
  Segment& operator=(const Segment&) = delete;
  ~Segment();

  /// False when detached, moved from or default-constructed.
  [[nodiscard]] bool is_attached() const noexcept { return base_ != nullptr; }
  /// The kind's bytes in this process.
  [[nodiscard]] std::byte* payload() const noexcept { return base_ + payload_offset_; }
  /// Bytes at payload().
  [[nodiscard]] std::size_t payload_size() const noexcept { return payload_size_; }
  /// The mapping (the header) in this process.
  [[nodiscard]] std::byte* base() const noexcept { return base_; }
  /// Bytes mapped.
  [[nodiscard]] std::size_t mapped_size() const noexcept { return size_; }
  /// The segment's name.
  [[nodiscard]] const std::string& name() const noexcept { return name_; }
  /// Its file path.
  [[nodiscard]] const std::string& path() const noexcept { return path_; }
  /// What it holds.
  [[nodiscard]] SegmentKind kind() const noexcept { return kind_; }
  /// The kind's parameters from the header.
  [[nodiscard]] const std::array<std::uint64_t, 8>& params() const noexcept { return params_; }
  /// The process that created it.
  [[nodiscard]] ProcessId creator() const noexcept { return creator_; }
  /// This handle created it (create, or open_or_create that created).
  [[nodiscard]] bool created_here() const noexcept { return created_here_; }
  /// Mapped with SegmentOptions::read_only: any write through payload() faults.
  [[nodiscard]] bool read_only() const noexcept { return read_only_; }
  /// The descriptor kept open (file-backed, memfd or open_fd segments), else -1.
  /// Owned by the segment: pass it on, do not close it.
  [[nodiscard]] int fd() const noexcept { return fd_; }
  /// A new read-only descriptor of this segment (the caller owns and closes
  /// it): hand it to a process that must only read (zipc::send_fd); mapping it
  /// writable fails there, so it opens with SegmentOptions::read_only. Reopens
  /// the kept descriptor, else the path. Throws Errc::system / permission_denied.
  [[nodiscard]] int read_only_fd() const;
  /// The message type a typed channel recorded at create (empty for the byte
  /// API). Throws Errc::corrupt_header when the record fails its checksum.
  [[nodiscard]] std::optional<TypeIdentity> type_identity() const;
  /// Remarks about options that could not be honoured (e.g. huge pages fell back).
  [[nodiscard]] const std::string& notes() const noexcept { return notes_; }

  /// Flushes a file-backed segment to disk (msync + fsync).
  void sync() const;
  /// Unmaps this process's view now (the destructor does the same); the
  /// segment stays for every other process (remove() deletes the name).
  void detach() noexcept;

 private:
  std::byte* base_ = nullptr;
  std::size_t size_ = 0;
  std::size_t payload_offset_ = 0;
  std::size_t payload_size_ = 0;
  int fd_ = -1;  // kept open for file-backed segments (sync), else -1
  std::string name_;
  std::string path_;
  SegmentKind kind_ = SegmentKind::any;
  std::array<std::uint64_t, 8> params_{};
  ProcessId creator_;
  bool created_here_ = false;
  bool read_only_ = false;
  std::string notes_;

  friend struct SegmentAccess;
};

}  // namespace zipc
