#include "origins.hpp"

namespace zipc::bridge_detail {

std::string Origins::key(std::string_view origin, std::string_view channel) {
  std::string k;
  k.reserve(origin.size() + 1 + channel.size());
  k.append(origin).append(1, '\n').append(channel);
  return k;
}

Origins::Entry* Origins::find(std::string_view origin, std::string_view channel) {
  if (!lru_.empty()) {  // most messages come from the origin of the one before
    const std::string& k = lru_.front().first;
    if (k.size() == origin.size() + 1 + channel.size() && k.compare(0, origin.size(), origin) == 0 &&
        k[origin.size()] == '\n' && k.compare(origin.size() + 1, std::string::npos, channel) == 0)
      return &lru_.front().second;
  }
  scratch_.assign(origin).append(1, '\n').append(channel);
  const auto it = map_.find(scratch_);
  if (it == map_.end()) return nullptr;
  if (it->second != lru_.begin()) lru_.splice(lru_.begin(), lru_, it->second);
  return &it->second->second;
}

Origins::Entry& Origins::get(std::string_view origin, std::string_view channel, bool* fresh) {
  if (Entry* e = find(origin, channel)) {
    *fresh = false;
    return *e;
  }
  *fresh = true;
  while (map_.size() >= max_) {
    map_.erase(std::string_view(lru_.back().first));
    lru_.pop_back();
    ++evicted_;
  }
  lru_.emplace_front(key(origin, channel), Entry{});
  map_.emplace(std::string_view(lru_.front().first), lru_.begin());
  return lru_.front().second;
}

}  // namespace zipc::bridge_detail
