#include "shm_map.hpp"

#include <sys/mman.h>

#include <stdexcept>

#include "fd_channel.hpp"

namespace zipc::bench {

void* map_shared_anonymous(std::size_t size) {
  void* p = ::mmap(nullptr, size, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
  if (p == MAP_FAILED) throw_errno("mmap(MAP_SHARED|MAP_ANONYMOUS, " + std::to_string(size) + ")");
  return p;
}

void unmap(void* p, std::size_t size) noexcept {
  if (p) ::munmap(p, size);
}

SharedMaps::~SharedMaps() {
  for (auto& [k, v] : maps_) unmap(v.first, v.second);
}

void* SharedMaps::create(const std::string& key, std::size_t size) {
  destroy(key);
  void* p = map_shared_anonymous(size);
  maps_[key] = {p, size};
  return p;
}

void* SharedMaps::get(const std::string& key) const {
  auto it = maps_.find(key);
  if (it == maps_.end()) throw std::runtime_error("shared map '" + key + "' was not created");
  return it->second.first;
}

void SharedMaps::destroy(const std::string& key) noexcept {
  auto it = maps_.find(key);
  if (it == maps_.end()) return;
  unmap(it->second.first, it->second.second);
  maps_.erase(it);
}

}  // namespace zipc::bench
