// A FlatBuffer built directly inside a queue write loan, read in place.
//
// FlatBuffers builds back to front, so the builder gets the block after an
// 8-byte prefix and the finished buffer ends at the block's end:
//
//   block: [u32 length][u32 0][ ...builder scratch / unused... ][ FlatBuffer (length bytes) ]
//
// The whole block is committed (a queue commit only records a length; no
// byte is copied). The reader takes the last `length` bytes, verifies them
// (a peer may be hostile or dead halfway) and reads fields in place.
#pragma once

#include <flatbuffers/flatbuffers.h>

#include <cstdint>
#include <cstring>
#include <span>
#include <stdexcept>

#include "snapshot.hpp"
#include "snapshot_generated.h"
#include "zipc/queue.hpp"

namespace zipc_example {

// Hands the builder one fixed region (the loan) and refuses to grow it.
class LoanAllocator final : public flatbuffers::Allocator {
 public:
  LoanAllocator(std::byte* p, std::size_t n) : p_(p), n_(n) {}
  std::uint8_t* allocate(std::size_t size) override {
    if (size > n_) throw std::length_error("message larger than the block");
    return reinterpret_cast<std::uint8_t*>(p_ + (n_ - size));  // ends where the block ends
  }
  void deallocate(std::uint8_t*, std::size_t) override {}
  std::uint8_t* reallocate_downward(std::uint8_t*, std::size_t, std::size_t, std::size_t, std::size_t) override {
    throw std::length_error("message larger than the block");
  }

 private:
  std::byte* p_;
  std::size_t n_;
};

inline constexpr std::size_t kFbPrefix = 8;

// Builds message `id` in the loan; false (loan aborted) if it does not fit.
inline bool fb_build(zipc::QueueWriteLoan& loan, std::uint64_t id) {
  std::byte* block = loan.data().data();
  const std::size_t room = (loan.size() - kFbPrefix) / 8 * 8;
  try {
    LoanAllocator alloc(block + kFbPrefix, room);
    flatbuffers::FlatBufferBuilder b(room, &alloc, false);
    auto symbol = b.CreateString(kSymbol);
    double* levels = nullptr;
    auto vec = b.CreateUninitializedVector<double>(kLevels, &levels);
    for (std::size_t i = 0; i < kLevels; ++i) levels[i] = level_value(id, i);
    b.Finish(fb::CreateSnapshot(b, id, id * 1000, symbol, vec));
    const std::uint32_t length = b.GetSize();
    std::memcpy(block, &length, sizeof length);
    return loan.commit(kFbPrefix + room).ok();
  } catch (const std::length_error&) {
    loan.abort();
    return false;
  }
}

// Verifies and reads message bytes in place; false if malformed or not message id.
inline bool fb_read(std::span<const std::byte> msg, std::uint64_t id, double* sum) {
  std::uint32_t length = 0;
  if (msg.size() < kFbPrefix) return false;
  std::memcpy(&length, msg.data(), sizeof length);
  if (length > msg.size() - kFbPrefix) return false;
  const auto* data = reinterpret_cast<const std::uint8_t*>(msg.data() + (msg.size() - length));
  flatbuffers::Verifier verifier(data, length);
  if (!fb::VerifySnapshotBuffer(verifier)) return false;
  const fb::Snapshot* s = fb::GetSnapshot(data);
  if (s->id() != id || s->levels() == nullptr || s->symbol() == nullptr) return false;
  return check_levels(id, std::span<const double>(s->levels()->data(), s->levels()->size()), sum);
}

}  // namespace zipc_example
