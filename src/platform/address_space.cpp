#include "address_space.hpp"

#include <sys/mman.h>
#include <sys/random.h>

namespace zipc::platform {

void* reserve_address_space_near(void* hint, std::size_t size) noexcept {
  void* p = ::mmap(hint, size, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
  return p == MAP_FAILED ? nullptr : p;
}

std::uint64_t random_u64() noexcept {
  std::uint64_t v = 0;
  if (::getrandom(&v, sizeof v, GRND_NONBLOCK) != static_cast<ssize_t>(sizeof v)) return 0;
  return v;
}

}  // namespace zipc::platform
