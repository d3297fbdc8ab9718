/// \file
/// zipc/options.hpp - the vocabulary every channel's options share.
///
/// \code
///   zipc::QueueOptions q;
///   q.producers = zipc::Multiplicity::multi;  // many producers, one consumer
///   q.consumers = zipc::Multiplicity::single;
///   zipc::TopicOptions t;
///   t.publishers = zipc::Multiplicity::single;  // the same enum for topics
///   static_assert(zipc::kDefaultRecoveryTime == std::chrono::milliseconds(200));
///   (void)q; (void)t;
/// \endcode
///
/// Every channel's options struct (QueueOptions, TopicOptions, RpcOptions,
/// HeapOptions) has the same shape where the concepts match:
///   SegmentOptions segment;   // permissions, file path, prefault, huge pages
///   WaitOptions wait;         // how this handle's blocking calls wait
///   std::chrono::milliseconds recovery_time = kDefaultRecoveryTime;
///   bool accept_existing = false;  // open_or_create: reuse a segment whose geometry differs
/// A field whose unit differs between channels names its unit
/// (QueueOptions::block_count, TopicOptions::capacity_bytes).
#pragma once

#include <chrono>
#include <cstdint>

namespace zipc {

/// How many producers / consumers (Queue) or publishers (Topic) a channel admits.
enum class Multiplicity : std::uint8_t {
  single = 0,  ///< one at a time: a second live one fails with Errc::busy
  multi = 1,   ///< any number
};

/// How long a survivor waits on something a silent peer holds before it checks
/// whether that peer died and recovers what it held. One default everywhere.
inline constexpr std::chrono::milliseconds kDefaultRecoveryTime{200};

}  // namespace zipc
