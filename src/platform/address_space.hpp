// Picking virtual addresses for fixed-address mappings.
#pragma once

#include <cstddef>
#include <cstdint>

namespace zipc::platform {

// Reserves size bytes of PROT_NONE address space, preferring hint (the
// kernel, or a sanitizer runtime, may place it elsewhere). nullptr on failure.
void* reserve_address_space_near(void* hint, std::size_t size) noexcept;
// A few random bytes from the kernel (getrandom); 0 if unavailable.
std::uint64_t random_u64() noexcept;

}  // namespace zipc::platform
