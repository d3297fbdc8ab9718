//! iceoryx2 measured as its authors measure it: the set-up of
//! iceoryx2/benchmarks/publish-subscribe/src/main.rs (commit 0d42374), kept
//! apart from the fair rows so a reader can put iceoryx2's published ~100 ns
//! beside the fair figure of the same run (docs/design/peers.md).
//!
//! What the authors' benchmark does, and this copies:
//! - two threads of ONE process (not two processes), pinned to CPUs 0 and 1;
//! - services `a2b` and `b2a`, `history_size(0)`, `subscriber_max_buffer_size(1)`,
//!   `enable_safe_overflow(true)`: a late sample overwrites the one waiting;
//! - the payload is loaned and sent uninitialised: nobody writes or reads it;
//! - `receive()` polled in a tight loop, no pause and no yield;
//! - latency = total time / (2 x iterations): a mean one-way figure, no percentiles.
//!
//! Their threads ask for priority 255 under the default scheduler (SCHED_OTHER,
//! where a priority has no effect), so nothing is done for it here.

use iceoryx2::prelude::*;
use std::sync::Barrier;

type Res<T> = Result<T, Box<dyn std::error::Error>>;

fn service(node: &Node<ipc::Service>, name: &str) -> Res<iceoryx2::service::port_factory::publish_subscribe::PortFactory<ipc::Service, [u8], ()>> {
    let sn: ServiceName = name.try_into()?;
    Ok(node
        .service_builder(&sn)
        .publish_subscribe::<[u8]>()
        .max_publishers(1)
        .max_subscribers(1)
        .history_size(0)
        .subscriber_max_buffer_size(1)
        .enable_safe_overflow(true)
        .create()?)
}

/// One run of `iterations` round trips of `size` bytes; returns the mean one-way ns.
fn once(prefix: &str, size: usize, iterations: u64, cpus: (i64, i64), pin: fn(i64), now_ns: fn() -> u64) -> Res<f64> {
    let node = NodeBuilder::new().create::<ipc::Service>()?;
    let a2b = service(&node, &format!("{prefix}/a2b"))?;
    let b2a = service(&node, &format!("{prefix}/b2a"))?;
    let (ready, go) = (Barrier::new(3), Barrier::new(3));
    let (ready, go, a2b, b2a) = (&ready, &go, &a2b, &b2a);
    std::thread::scope(|s| -> Res<f64> {
        let t1 = s.spawn(move || -> Result<(), String> {
            pin(cpus.0);
            let tx = a2b.publisher_builder().initial_max_slice_len(size).create().map_err(|e| e.to_string())?;
            let rx = b2a.subscriber_builder().create().map_err(|e| e.to_string())?;
            ready.wait();
            go.wait();
            // SAFETY: as the authors' benchmark: the payload is never read, so
            // marking the uninitialised loan initialised exposes nothing.
            let mut sample = unsafe { tx.loan_slice_uninit(size).map_err(|e| e.to_string())?.assume_init() };
            for _ in 0..iterations {
                sample.send().map_err(|e| e.to_string())?;
                sample = unsafe { tx.loan_slice_uninit(size).map_err(|e| e.to_string())?.assume_init() };
                while rx.receive().map_err(|e| e.to_string())?.is_none() {}
            }
            Ok(())
        });
        let t2 = s.spawn(move || -> Result<(), String> {
            pin(cpus.1);
            let tx = b2a.publisher_builder().initial_max_slice_len(size).create().map_err(|e| e.to_string())?;
            let rx = a2b.subscriber_builder().create().map_err(|e| e.to_string())?;
            ready.wait();
            go.wait();
            for _ in 0..iterations {
                // SAFETY: as above, the payload is never read.
                let sample = unsafe { tx.loan_slice_uninit(size).map_err(|e| e.to_string())?.assume_init() };
                while rx.receive().map_err(|e| e.to_string())?.is_none() {}
                sample.send().map_err(|e| e.to_string())?;
            }
            Ok(())
        });
        ready.wait();
        let start = now_ns();
        go.wait();
        let a = t1.join().map_err(|_| "thread 1 panicked")?;
        let b = t2.join().map_err(|_| "thread 2 panicked")?;
        let elapsed = now_ns() - start;
        a?;
        b?;
        Ok(elapsed as f64 / (iterations as f64 * 2.0))
    })
}

/// Rows `pingpong-authors` for 64 B and 8 KiB (the authors' default size):
/// the median of `reps` runs of the mean one-way latency, with their spread.
pub fn rows(prefix: &str, full: bool, cpus: &[i64], pin: fn(i64), now_ns: fn() -> u64) -> Res<Vec<String>> {
    if cpus.len() < 2 {
        return Ok(Vec::new()); // the set-up needs two CPUs
    }
    let iterations: u64 = if full { 10_000_000 } else { 300_000 };
    let reps = 5; // as zipc-bench's rows (bench/repetitions.hpp)
    let mut out = Vec::new();
    for size in [64usize, 8192] {
        let mut means = Vec::new();
        for r in 0..reps {
            means.push(once(&format!("{prefix}-{size}-{r}"), size, iterations, (cpus[0], cpus[1]), pin, now_ns)?);
        }
        means.sort_by(|a, b| a.partial_cmp(b).unwrap());
        let med = means[reps / 2];
        let (lo, hi) = (means[0], means[reps - 1]);
        out.push(format!(
            "{{\"workload\":\"pingpong-authors\",\"transport\":\"iceoryx2\",\"family\":\"reference\",\"size\":{size},\"wait\":\"busy\",\
\"processes\":1,\"threads\":2,\"cpus\":2,\"pinning\":\"one CPU each\",\"latency\":\"mean one way = total time / (2 x iterations)\",\
\"setup\":\"iceoryx2 benchmarks/publish-subscribe: threads of one process, buffer 1 with safe overflow, payload untouched, tight polling\",\
\"oneway_mean_ns\":{med},\"ratio_basis\":\"none: a reference row, measured as iceoryx2's authors measure\",\"spread\":{{\"oneway_mean_ns\":{{\"min\":{lo},\"max\":{hi},\"rel\":{}}}}},\"iterations\":{iterations},\"repetitions\":{reps},\
\"msgs_per_s\":{},\"lost\":0}}",
            (hi - lo) / med,
            1e9 / med
        ));
    }
    Ok(out)
}
