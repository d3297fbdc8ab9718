// Who is attached to a segment (attached.hpp).
#include "attached.hpp"

#include <dirent.h>
#include <unistd.h>

#include <algorithm>
#include <fstream>

namespace zipc_tool {

MapIndex scan_mappings() {
  MapIndex index;
  const pid_t self = ::getpid();
  DIR* proc = ::opendir("/proc");
  if (proc == nullptr) return index;
  while (const dirent* e = ::readdir(proc)) {
    char* end = nullptr;
    const long pid = std::strtol(e->d_name, &end, 10);
    if (end == e->d_name || *end != '\0' || pid <= 0 || pid == self) continue;
    std::ifstream maps(std::string("/proc/") + e->d_name + "/maps");  // gone or not ours: skipped
    std::string line;
    std::string last;
    while (std::getline(maps, line)) {
      const std::size_t at = line.find(" /");  // the path column
      if (at == std::string::npos) continue;
      std::string path = line.substr(at + 1);
      if (path.size() > 10 && path.compare(path.size() - 10, 10, " (deleted)") == 0) continue;  // removed already
      if (path == last) continue;  // consecutive mappings of one file
      last = path;
      auto& pids = index[path];
      if (std::find(pids.begin(), pids.end(), static_cast<pid_t>(pid)) == pids.end()) {
        pids.push_back(static_cast<pid_t>(pid));
      }
    }
  }
  ::closedir(proc);
  return index;
}

Attachment attachment(const zipc::ChannelReport& r, const MapIndex& maps) {
  Attachment a;
  a.records_known = r.participants_known;
  std::vector<pid_t> named;
  for (const auto& p : r.participants) {
    if (!p.alive) {
      ++a.dead;
      continue;
    }
    a.live.push_back(p.role + " pid " + std::to_string(p.process.pid));
    named.push_back(p.process.pid);
  }
  if (auto it = maps.find(r.segment.path); it != maps.end()) {
    for (pid_t pid : it->second) {
      if (std::find(named.begin(), named.end(), pid) == named.end()) {
        a.live.push_back("pid " + std::to_string(pid) + " (maps it)");
      }
    }
  }
  return a;
}

std::string join(const std::vector<std::string>& items) {
  std::string s;
  for (const auto& i : items) {
    if (!s.empty()) s += ", ";
    s += i;
  }
  return s;
}

}  // namespace zipc_tool
