// The transport registry: every bench/transports/*.cpp adds a factory at
// static-initialization time (ZIPC_BENCH_TRANSPORT).
#include <algorithm>

#include "transport.hpp"

namespace zipc::bench {
namespace {

std::vector<TransportFactory>& factories() {
  static std::vector<TransportFactory> list;
  return list;
}

}  // namespace

const char* to_string(Wait w) noexcept {
  switch (w) {
    case Wait::busy: return "busy";
    case Wait::adaptive: return "adaptive";
    case Wait::block: return "block";
  }
  return "?";
}

bool register_transport(TransportFactory factory) {
  factories().push_back(factory);
  return true;
}

std::vector<std::unique_ptr<Transport>> all_transports() {
  std::vector<std::unique_ptr<Transport>> out;
  for (auto f : factories()) out.push_back(f());
  // Stable order for tables: OS baselines, then peers, then zipc; by name inside.
  auto rank = [](const Transport& t) {
    const std::string f = t.family();
    return f == "os" ? 0 : f == "peer" ? 1 : 2;
  };
  std::stable_sort(out.begin(), out.end(), [&](const auto& a, const auto& b) {
    if (rank(*a) != rank(*b)) return rank(*a) < rank(*b);
    return a->name() < b->name();
  });
  return out;
}

}  // namespace zipc::bench
