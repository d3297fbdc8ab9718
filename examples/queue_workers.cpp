// One producer feeding N worker processes through a zipc::Queue.
//
// The parent creates a "jobs" queue (one producer, many consumers) and a
// "results" queue (many producers, one consumer), forks the workers, sends
// the numbers 1..kJobs as jobs, closes the jobs queue, and sums the squares
// the workers send back. Each job is taken by exactly one worker.
//
//   example_queue_workers [workers]      (default 3)
#include <unistd.h>

#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

#include "fork_run.hpp"
#include "zipc/queue.hpp"

using namespace std::chrono_literals;

namespace {

constexpr std::uint64_t kJobs = 100'000;

struct Result {
  std::uint64_t square_sum;
  std::uint64_t jobs;
  std::int32_t worker;
};

int worker(const std::string& jobs_name, const std::string& results_name, int id) {
  auto jobs = zipc::Queue::open(jobs_name, zipc::Role::consumer);
  auto results = zipc::Queue::open(results_name, zipc::Role::producer);
  Result r{0, 0, id};
  for (;;) {
    // Zero-copy: read the job where the producer wrote it.
    zipc::QueueReadLoan job = jobs.acquire(10s);
    if (!job) {
      if (job.status() == zipc::Status::closed) break;  // drained and closed: done
      std::fprintf(stderr, "worker %d: %s\n", id, zipc::to_string(job.status()));
      return 1;
    }
    std::uint64_t n = 0;
    std::memcpy(&n, job.data().data(), sizeof n);
    r.square_sum += n * n;
    ++r.jobs;
  }
  return results.send(std::as_bytes(std::span(&r, 1)), 10s) == zipc::Status::ok ? 0 : 1;
}

}  // namespace

int main(int argc, char** argv) {
  const int workers = argc > 1 ? std::atoi(argv[1]) : 3;
  const std::string suffix = std::to_string(::getpid());
  const std::string jobs_name = "example-jobs-" + suffix, results_name = "example-results-" + suffix;

  zipc::QueueOptions jopt;
  jopt.block_size = 8;
  jopt.block_count = 1024;
  jopt.producers = zipc::Multiplicity::single;
  jopt.consumers = zipc::Multiplicity::multi;
  auto jobs = zipc::Queue::create(jobs_name, jopt, zipc::Role::producer);
  zipc::QueueOptions ropt;
  ropt.block_size = sizeof(Result) + 8 - sizeof(Result) % 8;
  ropt.block_count = 64;
  ropt.producers = zipc::Multiplicity::multi;
  ropt.consumers = zipc::Multiplicity::single;
  auto results = zipc::Queue::create(results_name, ropt, zipc::Role::consumer);

  std::vector<pid_t> kids;
  kids.reserve(static_cast<std::size_t>(workers));
  for (int i = 0; i < workers; ++i) {
    kids.push_back(zipc_example::fork_run([&, i] { return worker(jobs_name, results_name, i); }));
  }

  std::uint64_t expected = 0;
  for (std::uint64_t n = 1; n <= kJobs; ++n) {
    expected += n * n;
    if (jobs.send(std::as_bytes(std::span(&n, 1)), 10s) != zipc::Status::ok) {
      std::fprintf(stderr, "send failed\n");
      return 1;
    }
  }
  jobs.close();  // workers drain what is left, then see closed

  std::uint64_t total = 0, count = 0;
  bool ok = true;
  for (int i = 0; i < workers; ++i) {
    Result r{};
    auto got = results.recv(std::as_writable_bytes(std::span(&r, 1)), 30s);
    if (!got.ok()) {
      ok = false;
      break;
    }
    std::printf("worker %d did %llu jobs\n", r.worker, static_cast<unsigned long long>(r.jobs));
    total += r.square_sum;
    count += r.jobs;
  }
  for (pid_t pid : kids) ok = zipc_example::wait_exit(pid) == 0 && ok;
  const auto st = jobs.stats();
  std::printf("jobs: sent %llu received %llu; sum of squares %llu (expected %llu)\n",
              static_cast<unsigned long long>(st.sent), static_cast<unsigned long long>(st.received),
              static_cast<unsigned long long>(total), static_cast<unsigned long long>(expected));
  zipc::Queue::remove(jobs_name);
  zipc::Queue::remove(results_name);
  return ok && count == kJobs && total == expected ? 0 : 1;
}
