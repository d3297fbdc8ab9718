/// \file
/// zipc/typed.hpp - typed channels: messages that are Ts, checked across processes.
///
/// \code
///   struct Order { std::uint64_t id; double price; std::uint32_t qty; };
///   ---
///   const std::string name = "typed-doc-" + std::to_string(zipc::ProcessId::current().pid);
///   auto q = zipc::TypedQueue<Order>::create(name);
///   if (auto loan = q.try_reserve()) {  // one Order, zeroed, in the block itself
///     loan->id = 7;
///     loan->price = 101.5;
///     (void)loan.commit();
///   }
///   if (auto in = q.try_acquire()) {  // read in place; released when `in` goes
///     (void)in->price;
///   }
///   if (auto slice = q.reserve_slice(3, std::chrono::milliseconds(10))) {  // three Orders in one message
///     slice[2].qty = 1;
///     (void)slice.commit();
///   }
///   auto all = q.acquire_slice(std::chrono::milliseconds(10));  // all.span().size() == 3
///   (void)all;
///   // Another process opening `name` as a TypedQueue<Quote> gets
///   // zipc::Error(Errc::type_mismatch) naming both types and sizes.
///   zipc::TypedQueue<Order>::remove(name);
/// \endcode
///
/// Thin layers over the byte API (Queue, Topic, Rpc): same segments, same
/// algorithms, same statuses. What T may be: zipc::ShmMessage (typed_loan.hpp);
/// how the type is identified: zipc/type_identity.hpp; docs/guide/typed.md.
#pragma once

#include "zipc/type_identity.hpp"
#include "zipc/typed_loan.hpp"
#include "zipc/typed_queue.hpp"
#include "zipc/typed_rpc.hpp"
#include "zipc/typed_topic.hpp"
