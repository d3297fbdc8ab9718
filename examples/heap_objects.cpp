// Zero-copy object passing (docs/design/reference.md §4, last pattern): a producer
// process builds an object graph in a shared zipc::Heap and sends ONLY its
// offset to a consumer, which walks the graph in place and frees it.
//
// The heap is relocatable (AddressMode::any): each process maps it at its own
// address, so the graph links with zipc::offset_ptr and the message carries an
// arena offset (Heap::offset_of / Heap::at). The offset - 8 bytes - travels
// through a zipc::Queue: the notification channel stays tiny however large
// the graph is.
//
// Run with no arguments: it forks the producer, checks what the consumer saw,
// removes the heap, and exits 0 only when everything matched.
#include <unistd.h>

#include <algorithm>
#include <chrono>

#include <cstdint>
#include <cstdio>
#include <cstring>
#include <string>

#include "fork_run.hpp"
#include "zipc/heap.hpp"
#include "zipc/offset_ptr.hpp"
#include "zipc/queue.hpp"

namespace {

struct Order {
  std::uint64_t id;
  double price;
  zipc::offset_ptr<char> note;  // a string in the heap
  std::uint32_t note_length;
  zipc::offset_ptr<Order> next;
};

struct Batch {
  std::uint64_t count;
  zipc::offset_ptr<Order> first;
};

constexpr std::uint64_t kOrders = 1000;

std::string note_for(std::uint64_t id) {
  return "order " + std::to_string(id) + " placed in the producer";
}

// Producer: builds the graph through its own mapping, returns the Batch's offset.
std::uint64_t produce(zipc::Heap& heap) {
  auto* batch = static_cast<Batch*>(heap.allocate(sizeof(Batch), alignof(Batch)));
  if (batch == nullptr) return zipc::Heap::kNoOffset;
  ::new (batch) Batch{0, nullptr};
  zipc::offset_ptr<Order>* link = &batch->first;
  for (std::uint64_t id = 1; id <= kOrders; ++id) {
    auto* order = static_cast<Order*>(heap.allocate(sizeof(Order), alignof(Order)));
    const std::string text = note_for(id);
    auto* note = static_cast<char*>(heap.allocate(text.size()));
    if (order == nullptr || note == nullptr) return zipc::Heap::kNoOffset;
    std::copy_n(text.data(), text.size(), note);  // no terminator: the Order holds the length
    ::new (order) Order{id, static_cast<double>(id) * 1.5, note, static_cast<std::uint32_t>(text.size()), nullptr};
    *link = order;
    link = &order->next;
    ++batch->count;
  }
  return heap.offset_of(batch);
}

// Consumer: validates the offset, walks and checks the graph, frees it.
bool consume(zipc::Heap& heap, std::uint64_t offset) {
  Batch* batch = heap.at<Batch>(offset);  // nullptr if a peer sent garbage
  if (batch == nullptr || batch->count != kOrders) return false;
  std::uint64_t id = 0;
  double total = 0;
  for (Order* o = batch->first.get(); o != nullptr;) {
    ++id;
    if (heap.offset_of(o) == zipc::Heap::kNoOffset || o->id != id) return false;
    if (std::string(o->note.get(), o->note_length) != note_for(id)) return false;
    total += o->price;
    Order* next = o->next.get();
    if (heap.deallocate(o->note.get()) != zipc::HeapStatus::ok) return false;
    if (heap.deallocate(o) != zipc::HeapStatus::ok) return false;
    o = next;
  }
  std::printf("consumer: %llu orders, total price %.1f, read in place at %p\n", static_cast<unsigned long long>(id),
              total, static_cast<void*>(batch));
  const bool ok = id == kOrders && total == 1.5 * kOrders * (kOrders + 1) / 2;
  return heap.deallocate(batch) == zipc::HeapStatus::ok && ok;
}

}  // namespace

int main() {
  const std::string name = "example.heap_objects." + std::to_string(::getpid());
  const std::string queue_name = name + ".offsets";
  bool ok = false;
  try {
    auto heap = zipc::Heap::create(name, 4 << 20);  // AddressMode::any
    const auto baseline = heap.stats();
    zipc::QueueOptions qo;
    qo.block_size = sizeof(std::uint64_t);  // one offset per message
    qo.block_count = 16;
    qo.producers = zipc::Multiplicity::single;
    qo.consumers = zipc::Multiplicity::single;
    auto offsets = zipc::Queue::create(queue_name, qo, zipc::Role::consumer);
    const pid_t producer = zipc_example::fork_run([&] {
      auto mine = zipc::Heap::open(name);  // a mapping of our own, at another address ...
      heap.detach();                       // ... and none inherited from the parent
      auto out = zipc::Queue::open(queue_name, zipc::Role::producer);
      const std::uint64_t offset = produce(mine);
      std::printf("producer: graph built at %p, sending offset %llu\n", static_cast<void*>(mine.at<char>(offset)),
                  static_cast<unsigned long long>(offset));
      return out.send(std::as_bytes(std::span(&offset, 1)), std::chrono::seconds(10)) == zipc::Status::ok ? 0 : 1;
    });
    std::uint64_t offset = zipc::Heap::kNoOffset;
    const zipc::IoResult r = offsets.recv(std::as_writable_bytes(std::span(&offset, 1)), std::chrono::seconds(30));
    const bool got = r.ok() && r.size == sizeof offset;
    ok = zipc_example::wait_exit(producer) == 0 && got && consume(heap, offset);
    const auto after = heap.stats();
    ok = ok && after.allocated_blocks == baseline.allocated_blocks && after.free_bytes == baseline.free_bytes;
    std::printf("heap after consume: %llu blocks allocated, %llu bytes free (as before: %s)\n",
                static_cast<unsigned long long>(after.allocated_blocks),
                static_cast<unsigned long long>(after.free_bytes), ok ? "yes" : "no");
  } catch (const std::exception& e) {
    std::fprintf(stderr, "heap_objects: %s\n", e.what());
  }
  zipc::Heap::remove(name);
  zipc::Queue::remove(queue_name);
  std::puts(ok ? "heap_objects: OK" : "heap_objects: FAILED");
  return ok ? 0 : 1;
}
