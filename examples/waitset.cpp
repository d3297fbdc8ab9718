// One thread serves a work queue and 16 topics through a zipc::WaitSet.
// Run with no argument: it forks a producer process that publishes on every
// topic and sends jobs, then closes the queue; the server counts what it got
// and exits 0 only when nothing was lost.
#include <unistd.h>

#include <array>
#include <chrono>
#include <cstdio>
#include <string>
#include <thread>
#include <vector>

#include "fork_run.hpp"
#include "zipc/zipc.hpp"

using namespace std::chrono_literals;

namespace {

constexpr int kTopics = 16;
constexpr int kPerTopic = 50;
constexpr int kJobs = 200;

std::string topic_name(const std::string& base, int i) {
  return base + ".t" + std::to_string(i);
}

int produce(const std::string& base) {
  auto jobs = zipc::Queue::open(base + ".jobs", zipc::Role::producer);
  std::vector<zipc::Topic> topics;
  std::vector<zipc::Publisher> pubs;
  for (int i = 0; i < kTopics; ++i) {
    topics.push_back(zipc::Topic::open(topic_name(base, i)));
    pubs.push_back(topics.back().publisher());
  }
  for (int n = 0; n < kPerTopic; ++n) {
    for (int i = 0; i < kTopics; ++i) {
      const std::string msg = "tick " + std::to_string(n);
      if (!pubs[static_cast<std::size_t>(i)].publish(std::as_bytes(std::span(msg)), 1s).ok()) return 1;
    }
    for (int j = 0; j < kJobs / kPerTopic; ++j) {
      const std::string job = "job";
      if (jobs.send(std::as_bytes(std::span(job)), 5s) != zipc::Status::ok) return 2;
    }
    std::this_thread::sleep_for(1ms);  // bursts, so the server sleeps between them
  }
  jobs.close();
  return 0;
}

}  // namespace

int main() {
  const std::string base = "example-waitset-" + std::to_string(getpid());
  zipc::QueueOptions qo;
  qo.block_size = 64;
  qo.block_count = 256;
  auto jobs = zipc::Queue::create(base + ".jobs", qo, zipc::Role::consumer);
  zipc::TopicOptions to;
  to.capacity_bytes = 1 << 16;  // holds every tick: a reliable subscriber never loses one
  to.max_message_size = 256;
  std::vector<zipc::Topic> topics;
  std::vector<zipc::Subscriber> subs;
  subs.reserve(kTopics);
  for (int i = 0; i < kTopics; ++i) {
    topics.push_back(zipc::Topic::create(topic_name(base, i), to));
    subs.push_back(topics.back().subscribe());
  }

  zipc::WaitSet ws;
  const std::uint64_t jobs_id = ws.attach(jobs);
  std::vector<std::uint64_t> topic_ids;
  topic_ids.reserve(subs.size());
  for (auto& s : subs) topic_ids.push_back(ws.attach(s));
  ws.attach_deadline(zipc::Deadline::after(30s));  // a safety net for the demo

  const pid_t child = zipc_example::fork_run([&] { return produce(base); });

  int jobs_done = 0, ticks = 0;
  bool closed = false, timed_out = false;
  std::array<std::byte, 256> buf{};
  ws.run([&](const zipc::Ready& r) {
    if (r.id == jobs_id) {
      for (;;) {  // drain: the WaitSet is level-triggered, so stopping early is fine too
        const zipc::IoResult got = jobs.try_recv(buf);
        if (got.status == zipc::Status::ok) ++jobs_done;
        if (got.status == zipc::Status::closed) closed = true;
        if (got.status != zipc::Status::ok) break;
      }
    } else if (r.kind == zipc::ReadyKind::subscriber) {
      for (std::size_t i = 0; i < topic_ids.size(); ++i)
        if (topic_ids[i] == r.id)
          while (subs[i].try_read(buf).status == zipc::Status::ok) ++ticks;
    } else if (r.kind == zipc::ReadyKind::deadline) {
      timed_out = true;
      ws.stop();
    }
    if (closed && ticks == kTopics * kPerTopic) ws.stop();
  });

  const int child_exit = zipc_example::wait_exit(child);
  jobs = {};
  zipc::Queue::remove(base + ".jobs");
  for (int i = 0; i < kTopics; ++i) zipc::Topic::remove(topic_name(base, i));
  std::printf("served %d jobs and %d ticks on %d topics from one thread (%s)\n", jobs_done, ticks, kTopics,
              ws.uses_io_uring() ? "io_uring futex waits" : "polling fallback");
  const bool ok = !timed_out && child_exit == 0 && jobs_done == kJobs && ticks == kTopics * kPerTopic;
  return ok ? 0 : 1;
}
