// Servers of this process, by name, so a client in the same process shares
// the server's mapping instead of mapping the segment a second time (one
// address per shared word: fewer mappings, and ThreadSanitizer can follow
// the synchronization).
#include <map>
#include <mutex>
#include <string>

#include "rpc/rpc_shared.hpp"

namespace zipc::detail {
namespace {

struct Registry {
  std::mutex mutex;
  std::map<std::string, std::weak_ptr<Segment>, std::less<>> servers;
};

Registry& registry() {
  static Registry* r = new Registry;  // never destroyed: used from destructors at exit
  return *r;
}

}  // namespace

void rpc_register_local(std::string_view name, const std::shared_ptr<Segment>& segment) {
  Registry& r = registry();
  std::lock_guard<std::mutex> lock(r.mutex);
  r.servers[std::string(name)] = segment;
}

void rpc_unregister_local(std::string_view name, const Segment* segment) noexcept {
  Registry& r = registry();
  std::lock_guard<std::mutex> lock(r.mutex);
  auto it = r.servers.find(name);
  if (it == r.servers.end()) return;
  auto live = it->second.lock();
  if (!live || live.get() == segment) r.servers.erase(it);
}

std::shared_ptr<Segment> rpc_find_local(std::string_view name) noexcept {
  Registry& r = registry();
  std::lock_guard<std::mutex> lock(r.mutex);
  auto it = r.servers.find(name);
  return it == r.servers.end() ? nullptr : it->second.lock();
}

}  // namespace zipc::detail
