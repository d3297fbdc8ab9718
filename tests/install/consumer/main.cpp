// An outside program using the installed zipc: creates a segment, opens it
// again by name, checks what it wrote, removes it.
#include <unistd.h>

#include <cstdio>
#include <cstring>
#include <string>
#include <zipc/zipc.hpp>

int main() {
  const std::string name = "t.consumer." + std::to_string(::getpid());
  try {
    auto seg = zipc::Segment::create(name, {zipc::SegmentKind::user, 64, {7}},
                                     [](std::byte* p, std::size_t) { std::memcpy(p, "hello", 6); });
    auto again = zipc::Segment::open(name, zipc::SegmentKind::user);
    const bool ok = std::strcmp(reinterpret_cast<const char*>(again.payload()), "hello") == 0 && again.params()[0] == 7;
    zipc::Segment::remove(name);
    std::puts(ok ? "consumer: ok" : "consumer: wrong content");
    return ok ? 0 : 1;
  } catch (const zipc::Error& e) {
    zipc::Segment::remove(name);
    std::printf("consumer: %s\n", e.what());
    return 1;
  }
}
