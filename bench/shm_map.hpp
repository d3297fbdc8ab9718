// Anonymous MAP_SHARED memory made in the parent before fork: the simplest
// shared memory for the single-slot baselines (nothing to unlink, nothing
// left in /dev/shm if a run is killed).
#pragma once

#include <cstddef>
#include <map>
#include <string>

namespace zipc::bench {

class SharedMaps {
 public:
  ~SharedMaps();
  // Maps size zeroed bytes under key; throws on failure.
  void* create(const std::string& key, std::size_t size);
  void* get(const std::string& key) const;  // throws if absent
  void destroy(const std::string& key) noexcept;

 private:
  std::map<std::string, std::pair<void*, std::size_t>> maps_;
};

void* map_shared_anonymous(std::size_t size);  // throws
void unmap(void* p, std::size_t size) noexcept;

}  // namespace zipc::bench
