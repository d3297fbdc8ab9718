// The receiving side's accounting state per (origin, channel): bounded.
// Anyone who may publish on a bridged subject can invent origins, so the
// table keeps at most `max` of them and evicts the least recently seen
// (counted); an evicted origin that comes back starts its count afresh, as
// the first message ever seen from it does.
#pragma once

#include <cstddef>
#include <cstdint>
#include <list>
#include <string>
#include <string_view>
#include <unordered_map>

namespace zipc::bridge_detail {

class Origins {
 public:
  struct Entry {
    std::uint64_t expected = 0;   // the next Zipc-Seq
    std::uint64_t newest_ns = 0;  // the newest Zipc-Time accepted
    std::uint64_t dup_next = 0;   // the sequence after the last duplicate
    std::uint64_t dup_run = 0;    // duplicates in a row, each the one after the last
  };

  explicit Origins(std::size_t max = 4096) : max_(max == 0 ? 1 : max) {}
  void set_max(std::size_t max) { max_ = max == 0 ? 1 : max; }

  // The entry of (origin, channel), made when absent (*fresh then true; the
  // least recently used one evicted beyond the maximum). Valid until the next call.
  Entry& get(std::string_view origin, std::string_view channel, bool* fresh);
  // The entry or null (marks it used).
  Entry* find(std::string_view origin, std::string_view channel);

  [[nodiscard]] std::size_t size() const noexcept { return map_.size(); }
  [[nodiscard]] std::uint64_t evicted() const noexcept { return evicted_; }

 private:
  using Lru = std::list<std::pair<std::string, Entry>>;  // most recent first
  static std::string key(std::string_view origin, std::string_view channel);

  std::size_t max_;
  Lru lru_;
  std::unordered_map<std::string_view, Lru::iterator> map_;  // views into lru_'s keys
  std::uint64_t evicted_ = 0;
  std::string scratch_;
};

}  // namespace zipc::bridge_detail
