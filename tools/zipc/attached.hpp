// Who is attached to a segment, for gc and rm: a segment is in use while a
// live participant is recorded in it (judged by the liveness token recovery
// uses: pid + start time, PID-namespace safe) or a process of this PID
// namespace maps its file (/proc/PID/maps: also handles that keep no record,
// e.g. a Topic handle that neither publishes nor subscribes, or a heap).
#pragma once

#include <sys/types.h>

#include <map>
#include <string>
#include <vector>
#include <zipc/introspect.hpp>

namespace zipc_tool {

// Segment file path -> pids (other than this process) that map it. One scan of /proc.
using MapIndex = std::map<std::string, std::vector<pid_t>>;
MapIndex scan_mappings();

struct Attachment {
  std::vector<std::string> live;  // "subscriber pid 1234", "pid 99 (maps it)"
  std::size_t dead = 0;           // participant records of dead processes
  bool records_known = false;     // the kind keeps participant records
};
Attachment attachment(const zipc::ChannelReport& r, const MapIndex& maps);
// "subscriber pid 1234, pid 99 (maps it)"
std::string join(const std::vector<std::string>& items);

}  // namespace zipc_tool
