#include "segment/segment_space.hpp"

#include <cerrno>
#include <cstdio>

#include "core/fail.hpp"
#include "platform/file.hpp"

namespace zipc::detail {

std::string size_text(std::uint64_t bytes) {
  if (bytes < 1024) return std::to_string(bytes) + (bytes == 1 ? " byte" : " bytes");
  const char* units[] = {"KiB", "MiB", "GiB", "TiB", "PiB"};
  double v = static_cast<double>(bytes) / 1024;
  std::size_t u = 0;
  while (v >= 1024 && u + 1 < sizeof units / sizeof units[0]) {
    v /= 1024;
    ++u;
  }
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.1f %s", v, units[u]);
  return buf;
}

std::string space_label(const std::string& path, bool memfd) {
  if (memfd) return "memfd";
  const std::size_t slash = path.rfind('/');
  if (slash == std::string::npos) return ".";
  return slash == 0 ? "/" : path.substr(0, slash);
}

namespace {

[[noreturn]] void fail_no_room(std::string_view kind, std::string_view name, const std::string& where,
                               const platform::SpaceInfo& space, std::uint64_t total) {
  std::string need_text = size_text(total), free_text = size_text(space.free);
  if (need_text == free_text) {  // "needs 64.0 MiB, has 64.0 MiB free" would read as if it fit
    need_text = std::to_string(total) + " bytes";
    free_text = std::to_string(space.free) + " bytes";
  }
  fail(Errc::out_of_memory, kind, name,
       "needs " + need_text + (space.memory ? " of shared memory, " : " of disk, ") + where + " has " + free_text +
           " free");
}

}  // namespace

void reserve_space(int fd, std::string_view kind, std::string_view name, const std::string& where, std::uint64_t total,
                   bool commit) {
  platform::SpaceInfo space;
  const bool known = platform::space_of(fd, &space) == 0;
  // Pages the file holds already (an existing segment opened with prefault) need no room.
  platform::FileStat st;
  const std::uint64_t held = platform::stat_fd(fd, &st) == 0 ? st.allocated : 0;
  const std::uint64_t need = held < total ? total - held : 0;
  // space.total == 0: a file system without a limit of its own (a memfd: bounded by RAM and swap only).
  const bool limited = known && space.total != 0;
  if (limited && need > space.free) fail_no_room(kind, name, where, space, need);
  // Memory is committed only on request (prefault): an untouched page of a
  // tmpfs file costs nothing. A disk file gets its blocks now: no memory
  // either, and a full disk then fails here instead of with SIGBUS later.
  if (need == 0 || (!commit && known && space.memory)) return;
  const int r = platform::allocate_fd(fd, 0, total);
  if (r == 0 || r == -EOPNOTSUPP) return;
  if ((r == -ENOSPC || r == -ENOMEM) && limited) {
    platform::SpaceInfo now = space;
    (void)platform::space_of(fd, &now);  // another process may have taken room since the check
    fail_no_room(kind, name, where, now, need);
  }
  fail_errno(r, kind, name, "reserve " + size_text(need) + " in " + where);
}

}  // namespace zipc::detail
