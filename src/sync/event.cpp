#include "zipc/event.hpp"

#include <algorithm>
#include <cerrno>

#include "platform/clock.hpp"
#include "platform/cpu.hpp"
#include "platform/futex.hpp"
#include "sync/fences.hpp"

namespace zipc {

const char* to_string(WaitStrategy s) noexcept {
  switch (s) {
    case WaitStrategy::busy_poll: return "busy";
    case WaitStrategy::adaptive: return "adaptive";
    case WaitStrategy::block: return "block";
  }
  return "unknown";
}

Deadline Deadline::after(std::chrono::nanoseconds timeout) noexcept {
  if (timeout.count() < 0) return Deadline(0);
  const std::uint64_t now = platform::monotonic_ns();
  const auto t = static_cast<std::uint64_t>(timeout.count());
  // Anything past ~146 years (e.g. nanoseconds::max()) means "no deadline".
  if (t >= (std::numeric_limits<std::uint64_t>::max() >> 1) - now) return never();
  return Deadline(now + t);
}

bool Deadline::expired() const noexcept {
  return !is_never() && platform::monotonic_ns() >= ns_;
}

namespace detail {

namespace {
// Whether spinning pays for this thread: not when it shares its CPU with the
// peer it waits for (both pinned to one CPU, or more runnable threads than
// CPUs; the peer cannot run while we spin), nor when its peer takes longer
// than the spin budget every time. Learned from where waits end, per thread,
// so it follows affinity and load changes:
//  - the predicate came true while spinning: spinning pays;
//  - kSharedVotes waits in a row whose whole spin phase failed (whatever
//    ended them: a yield, or a sleep): stop spinning. One such wait proves
//    nothing: on two CPUs a peer a little slower than the spin budget now and
//    then is normal, and learning from a single wait (which came true right
//    after the first yield) turned a 256 KiB rpc from 27 k into 11 k round
//    trips/s, stuck there for good. On one CPU every wait fails its spin.
//  - a spin that was descheduled (two of its clock reads, 64 iterations
//    apart, lie more than kPreemptedGapNs and 8 of its shortest such steps
//    apart): stop spinning at once. Another thread wanted this CPU while we
//    spun, so on this host our spinning takes CPU time from the work we
//    wait for, even when the spin succeeds (a pipeline of more busy threads
//    than CPUs: the NATS bridge on 2 vCPUs spent a third of its process's
//    CPU time in two such spins, docs/guide/bridge.md).
//  - while "shared", a wait now and then probes with the full spin budget, to
//    notice when that stops being true; a failed probe doubles the distance
//    to the next one (kFirstProbe to kLastProbe waits), so a really shared
//    CPU pays for few of them.
thread_local bool t_cpu_shared = false;
thread_local std::uint32_t t_shared_votes = 0;    // consecutive waits whose spin phase failed
thread_local std::uint32_t t_probe_interval = 0;  // shared: waits between probes
thread_local std::uint32_t t_waits_to_probe = 0;  // shared: waits until the next probe
constexpr std::uint32_t kSharedVotes = 8;
constexpr std::uint64_t kPreemptedGapNs = 20'000;  // 64 pauses take 1-4 us when we keep the CPU
constexpr std::uint32_t kFirstProbe = 16;
constexpr std::uint32_t kLastProbe = 16384;
// How long waits take, learned: a wait on two CPUs that came true in the
// yield phase after several yields (the peer was running elsewhere, not
// waiting for our CPU) took a little longer than the spin budget: the next
// waits spin twice that long, up to kMaxStretch x spin_ns. A peer that takes
// 60 us per answer (a 256 KiB copy) otherwise cost every wait a futex sleep
// and wake-up (~30-40 us here) once the default 50 us budget ran out.
// Reset when the thread learns its CPU is shared.
thread_local std::uint64_t t_learned_budget_ns = 0;
constexpr std::uint64_t kMaxStretch = 8;
constexpr std::uint32_t kYieldsBeforeLearning = 4;
// Learned from waits that slept, too, but only while no thread on the machine
// waits for a CPU: a wait that outlasted its spin and its yields, slept, and
// came true within kMaxStretch x spin_ns (a 4 MiB rpc: ~100-250 us each way)
// paid a futex sleep and a cross-CPU wake-up of an idle vCPU (~25 us here)
// on each hop; the next waits spin twice that long. Spinning past spin_ns
// is free only while a CPU is to spare: with more runnable threads than CPUs
// (the NATS bridge's pipeline on two vCPUs) it takes CPU time from the work
// it waits for, and cost that pipeline 10% of its throughput when learned
// without this check. So a wait learns only when the kernel's count of
// runnable threads (itself included) is at most the number of CPUs, and a
// spin past spin_ns checks again every kLoadCheckGapNs and gives up, and
// forgets what it learned, when it no longer holds.
thread_local std::uint64_t t_slept_wait_start_ns = 0;  // the wait that went to sleep, if it may teach
constexpr std::uint64_t kLoadCheckGapNs = 50'000;
constexpr std::uint64_t kSwitchesSnapshotNs = 5'000;

bool a_cpu_is_to_spare() noexcept {
  const int running = platform::runnable_thread_count();
  return running > 0 && running <= platform::online_cpu_count();
}

std::uint64_t budget_for_next_wait(const WaitOptions& opt) noexcept {
  if (!t_cpu_shared) {
    return std::min<std::uint64_t>(std::max<std::uint64_t>(opt.spin_ns, t_learned_budget_ns),
                                   kMaxStretch * opt.spin_ns);
  }
  if (t_waits_to_probe > 0 && --t_waits_to_probe > 0) return 0;
  // A probe; should it fail, the next one comes twice as far away.
  t_probe_interval = std::min(2 * t_probe_interval, kLastProbe);
  t_waits_to_probe = t_probe_interval;
  return opt.spin_ns;
}
}  // namespace

bool cpu_looks_shared() noexcept {
  return t_cpu_shared;
}

namespace {
// From now on the CPU looks shared: no spinning, bar the probes.
void learn_shared() noexcept {
  if (t_cpu_shared) return;
  t_cpu_shared = true;
  t_learned_budget_ns = 0;
  t_probe_interval = kFirstProbe;
  t_waits_to_probe = kFirstProbe;
}

// A wait whose whole spin phase failed.
void spin_failed() noexcept {
  if (++t_shared_votes >= kSharedVotes) learn_shared();
}

// A spin descheduled by the kernel: another thread wanted this CPU. Enough
// on its own (a failed probe among them: the next comes twice as far away).
void spin_preempted() noexcept {
  t_shared_votes = std::max(t_shared_votes, kSharedVotes);
  learn_shared();
}
}  // namespace

void spin_succeeded(const SpinState& st) noexcept {
  if (st.iterations == 0) return;  // busy_poll, or ready at once: nothing learned
  if (st.budget_ns == 0) return;   // shared, no probe: nothing to learn either
  if (st.spin_done) {
    if (st.yields >= kYieldsBeforeLearning && !t_cpu_shared) {
      t_learned_budget_ns = 2 * (platform::monotonic_ns() - st.start_ns);  // capped where it is used
    }
    spin_failed();  // came true while yielding
    return;
  }
  t_cpu_shared = false;  // came true while spinning
  t_shared_votes = 0;
}

void spin_gave_up(const SpinState& st) noexcept {
  // Only a thread that did not look shared, or a probe, may learn from this
  // wait's end.
  t_slept_wait_start_ns = t_cpu_shared && st.budget_ns == 0 ? 0 : st.start_ns;
  if (st.budget_ns > 0) spin_failed();  // going to sleep
}

void slept_wait_succeeded(const WaitOptions& opt) noexcept {
  const std::uint64_t start = t_slept_wait_start_ns;
  t_slept_wait_start_ns = 0;
  if (start == 0 || opt.strategy != WaitStrategy::adaptive) return;
  const std::uint64_t took = platform::monotonic_ns() - start;
  // Shorter than the spin: it slept for another reason (the peer needed this
  // CPU). Longer than the stretch: not worth a spin.
  if (took <= opt.spin_ns || took > kMaxStretch * opt.spin_ns) return;
  if (!a_cpu_is_to_spare()) return;
  t_learned_budget_ns = 2 * took;  // capped where it is used
  t_cpu_shared = false;
  t_shared_votes = 0;
}

namespace {
// Busy polling on a CPU that other threads want. A busy poll keeps its CPU
// for as long as the kernel lets it, so with more busy threads than CPUs each
// one spins out whole time slices (milliseconds) while the thread it waits
// for may be queued behind it: the five busy processes of a 1 -> 4 fan-out on
// two vCPUs delivered 2.5 M or 6.5 M msgs/s depending on how the slices fell,
// and 11-14 M with the rule below (1-CPU ping-pong: 8 ms -> 16 us). A yield
// costs a syscall, which a poller on a CPU of its own should not pay every few
// microseconds, so (docs/design/overview.md, "Waiting"):
//  - a wait polls with PAUSE and reads the clock every kBusyPollsPerClockRead
//    polls (the deadline, and the rest below);
//  - once it has polled kBusyFirstYieldNs in vain it yields the CPU; a yield
//    that comes straight back (nobody else wanted the CPU) doubles the time
//    to the next one, up to kBusyMaxYieldGapNs;
//  - a yield that gave the CPU away (it took longer than kYieldGaveAwayNs)
//    shows another thread wants this CPU: from then on the thread's waits
//    yield at every clock read, until kIdleYieldsToForget yields in a row
//    came straight back (one is not enough: under EEVDF a yield does not
//    switch when the other thread has had more than its share, and a 1-CPU
//    busy ping-pong forgetting at once took 120 us a round trip).
// (A poll descheduled between two clock reads says the same, but by then it
// has polled in vain for longer than kBusyFirstYieldNs anyway.)
thread_local bool t_busy_cpu_wanted = false;
thread_local std::uint32_t t_busy_idle_yields = 0;  // yields in a row that came straight back
constexpr std::uint32_t kIdleYieldsToForget = 8;
constexpr std::uint32_t kBusyPollsPerClockRead = 256;  // ~5-8 us of PAUSEs here; a clock read is ~20 ns
constexpr std::uint64_t kBusyFirstYieldNs = 50'000;
constexpr std::uint64_t kBusyMaxYieldGapNs = 1'000'000;
constexpr std::uint64_t kYieldGaveAwayNs = 5'000;  // an idle sched_yield returns in ~0.3-1 us here

bool busy_poll_once(SpinState& st, const Deadline& d) noexcept {
  platform::cpu_relax();
  if ((++st.iterations % kBusyPollsPerClockRead) != 0) return true;
  std::uint64_t now = platform::monotonic_ns();
  if (!d.is_never() && now >= d.ns()) return false;
  if (st.last_ns == 0) {  // the wait's first clock read
    st.start_ns = now;
    st.yield_gap_ns = kBusyFirstYieldNs;
    st.next_yield_ns = t_busy_cpu_wanted ? now : now + kBusyFirstYieldNs;
  }
  if (now >= st.next_yield_ns) {
    platform::yield_cpu();
    ++st.yields;
    const std::uint64_t back = platform::monotonic_ns();
    if (back - now > kYieldGaveAwayNs) {
      t_busy_cpu_wanted = true;
      t_busy_idle_yields = 0;
    } else if (t_busy_cpu_wanted && ++t_busy_idle_yields >= kIdleYieldsToForget) {
      t_busy_cpu_wanted = false;
    }
    st.yield_gap_ns =
        t_busy_cpu_wanted ? 0 : std::min(std::max(2 * st.yield_gap_ns, kBusyFirstYieldNs), kBusyMaxYieldGapNs);
    st.next_yield_ns = back + st.yield_gap_ns;
    now = back;
  }
  st.last_ns = now;
  return true;
}
}  // namespace

bool spin_once(SpinState& st, const WaitOptions& opt, const Deadline& d) noexcept {
  if (opt.strategy == WaitStrategy::busy_poll) return busy_poll_once(st, d);
  // adaptive: spin, then yield, then (caller) sleep.
  if (st.iterations++ == 0) {
    st.start_ns = platform::monotonic_ns();
    st.last_ns = st.start_ns;
    st.budget_ns = budget_for_next_wait(opt);
  }
  if (!st.spin_done) {
    if (st.budget_ns == 0) {
      st.spin_done = true;
    } else {
      if ((st.iterations & 63u) != 0) {
        platform::cpu_relax();
        return true;
      }
      const std::uint64_t now = platform::monotonic_ns();
      if (!d.is_never() && now >= d.ns()) return false;
      // Descheduled: a step far longer than the shortest one (a slow
      // predicate makes every step long, which is not a gap).
      const std::uint64_t step = now - st.last_ns;
      // A gap in which the kernel did not switch this thread out (its count
      // of involuntary switches the same as kSwitchesSnapshotNs into the
      // spin) is the host's: it took the vCPU (gaps of 20-45 us, several a
      // millisecond in long spins on this guest), no thread wanted our CPU.
      // A gap before that snapshot counts as the kernel's.
      const bool preempted = opt.stop_spinning_when_preempted && step > kPreemptedGapNs && step / 8 > st.step_ns &&
                             (st.switches < 0 || platform::involuntary_switches() != st.switches);
      if (st.switches < 0 && now - st.start_ns >= kSwitchesSnapshotNs) st.switches = platform::involuntary_switches();
      st.step_ns = std::min(st.step_ns, step);
      st.last_ns = now;
      if (preempted) {
        spin_preempted();
        st.spin_done = true;
      } else if (now - st.start_ns < st.budget_ns) {
        if (now - st.start_ns < opt.spin_ns || now < st.next_load_check_ns) return true;
        // Past spin_ns: a learned stretch, which holds while a CPU is to spare.
        st.next_load_check_ns = now + kLoadCheckGapNs;
        if (a_cpu_is_to_spare()) return true;
        t_learned_budget_ns = 0;
        st.spin_done = true;
      } else {
        st.spin_done = true;
      }
    }
  }
  if (st.yields < opt.yields) {
    ++st.yields;
    platform::yield_cpu();
    return !d.expired();
  }
  return false;
}

}  // namespace detail

bool Event::sleep(std::uint32_t token, Deadline deadline) const noexcept {
  for (;;) {
    int r = platform::futex_wait(&seq, token, deadline.ns());
    if (r == -ETIMEDOUT) return true;
    if (r == -EINTR) continue;
    return false;  // woken, value changed, or spurious: caller re-checks
  }
}

void Event::notify(int count) noexcept {
  // Full fence: orders the caller's publication before reading waiters;
  // pairs with the seq_cst fetch_add in register_sleeper (Dekker).
  detail::full_fence();
  if (waiters.load(std::memory_order_relaxed) == 0) return;  // relaxed: ordered by the fence above
  // release: a waiter that loads the new value (acquire) also sees the data
  // published before this notify.
  seq.fetch_add(1, std::memory_order_release);
  platform::futex_wake(&seq, count);
}

}  // namespace zipc
