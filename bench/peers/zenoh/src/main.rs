//! zipc-bench-zenoh: Zenoh (crates.io `zenoh`, shared memory) publish-subscribe
//! measured the same way as every zipc-bench transport: two real processes
//! pinned to two CPUs, the sender writes every payload byte (the zipc-bench
//! message pattern: a 32-byte header, then words derived from the sequence
//! number) into a buffer of Zenoh's SHM provider, the receiver reads and checks
//! every byte; a wrong byte, or a message that did not arrive through shared
//! memory, fails the run.
//!
//! Contract of a zipc-bench extra program: `zipc-bench-zenoh [--full] --out FILE`
//! writes FILE as a JSON array of result rows (docs/design/bench.md).
//!
//! Set-up follows zenoh's examples (z_ping_shm / z_pong for ping-pong,
//! z_pub_shm_thr / z_sub_thr for the stream, z_pub_shm for the allocation):
//! two sessions in peer mode on loopback TCP, multicast scouting off, shared
//! memory enabled; publishers with CongestionControl::Block (nothing is
//! dropped); ping-pong publishers are express (z_ping / z_pong's default).
//! Every message is a fresh buffer of the sender's SHM provider (POSIX
//! backend) holding as many messages as the zipc row compared.
//!
//! Wait class: "block". The echo and the stream sink run in a subscriber
//! callback on Zenoh's receive thread (as z_pong and z_sub_thr), the ping side
//! blocks in the default FIFO channel's recv() (as z_ping_shm). Zenoh's
//! receive thread itself sleeps in the runtime's epoll on the TCP link that
//! carries the SHM descriptors, whatever the application does, so there is no
//! busy-polling row: a try_recv() spin would spin over the last hop only.

#[path = "../../common/peer.rs"]
mod peer;

use peer::*;
use std::io::{BufRead, BufReader, Write};
use std::process::{Command, Stdio};
use std::sync::mpsc;
use std::time::{Duration, Instant};
use zenoh::{
    bytes::ZBytes,
    qos::CongestionControl,
    shm::{GarbageCollect, PosixShmProviderBackend, ShmProvider, ShmProviderBuilder},
    Config, Session, Wait,
};

/// Any set-up step (matching, first round trip, a full SHM pool) longer than this fails the run.
const SETUP_BOUND: Duration = Duration::from_secs(10);

type Res<T> = Result<T, Box<dyn std::error::Error + Send + Sync>>;
type Provider = ShmProvider<PosixShmProviderBackend>;

/// Checks a received payload in place, in the sender's SHM buffer.
fn check_shm(payload: &ZBytes) -> Res<Header> {
    let Some(shm) = payload.as_shm() else {
        return Err(format!("a {} B message arrived without shared memory (SHM not negotiated)", payload.len()).into());
    };
    check(shm).ok_or_else(|| "checksum mismatch: a byte differs from what the sender wrote".into())
}

// ---- Zenoh set-up -----------------------------------------------------------

/// A peer-mode session as the examples' CommonArgs build it: `listen` on one
/// side, `connect` on the other, multicast scouting off, shared memory on.
fn session(endpoint: &str, listen: bool) -> Res<Session> {
    let mut c = Config::default();
    c.insert_json5("mode", "\"peer\"")?;
    c.insert_json5("scouting/multicast/enabled", "false")?;
    c.insert_json5("transport/shared_memory/enabled", "true")?;
    let key = if listen { "listen/endpoints" } else { "connect/endpoints" };
    c.insert_json5(key, &format!("[\"{endpoint}\"]"))?;
    zenoh::open(c).wait()
}

/// A loopback port nobody listens on now (the listener picks it up right after).
fn free_port() -> Res<u16> {
    Ok(std::net::TcpListener::bind("127.0.0.1:0")?.local_addr()?.port())
}

/// An SHM provider with room for `depth` messages of `size` bytes (the
/// buffer depth of the zipc row compared), on Zenoh's default POSIX backend.
fn provider(size: usize, depth: usize) -> Res<Provider> {
    let bytes = depth * size.div_ceil(64) * 64 + 4096;
    Ok(ShmProviderBuilder::default_backend(bytes).wait()?)
}

/// Allocates a buffer, writes the pattern into it and puts it. When every
/// buffer is still in the receiver's hands, garbage-collects and yields until
/// one comes back (Zenoh's BlockOn policy would sleep 1 ms per retry instead).
fn send(p: &Provider, publisher: &zenoh::pubsub::Publisher<'_>, size: usize, seq: u64, t_send: u64, sender: u32, flags: u32) -> Res<()> {
    let mut tries: u64 = 0;
    let mut buf = loop {
        match p.alloc(size).with_policy::<GarbageCollect>().wait() {
            Ok(b) => break b,
            Err(e) => {
                tries += 1;
                if tries % 4096 == 0 && tries > 1_000_000 {
                    return Err(format!("no free {size} B SHM buffer after {tries} tries: {e:?}").into());
                }
                std::thread::yield_now();
            }
        }
    };
    fill(&mut buf, seq, t_send, sender, flags);
    publisher.put(buf).wait()
}

/// Waits until the publisher's subscriber has declared itself (bounded).
fn wait_matching(publisher: &zenoh::pubsub::Publisher<'_>, what: &str) -> Res<()> {
    let deadline = Instant::now() + SETUP_BOUND;
    while !publisher.matching_status().wait()?.matching() {
        if Instant::now() > deadline {
            return Err(format!("no subscriber matched {what} within {} s", SETUP_BOUND.as_secs()).into());
        }
        std::thread::sleep(Duration::from_millis(1));
    }
    Ok(())
}

// ---- child roles -------------------------------------------------------------

/// Argument list of a child: role, key prefix, size, cpu, endpoint, depth.
struct RoleArgs {
    prefix: String,
    size: usize,
    endpoint: String,
    depth: usize,
}

/// The echo of z_pong: a subscriber callback that answers each request with a
/// new message the pong writes (sender 1), on the same CPU-pinned process.
fn role_pong(a: &RoleArgs) -> Res<()> {
    let s = session(&a.endpoint, true)?;
    let prov = provider(a.size, a.depth)?;
    let publisher = s
        .declare_publisher(format!("{}/rsp", a.prefix))
        .congestion_control(CongestionControl::Block)
        .express(true)
        .wait()?;
    let (done_tx, done_rx) = mpsc::channel::<Res<()>>();
    let size = a.size;
    let sub = s
        .declare_subscriber(format!("{}/req", a.prefix))
        .callback(move |sample| {
            let r = check_shm(sample.payload()).and_then(|h| {
                drop(sample); // the request's buffer goes back to the ping side first
                send(&prov, &publisher, if h.flags == FLAG_STOP { HEADER } else { size }, h.seq, h.t_send, 1, h.flags)?;
                Ok(h.flags)
            });
            match r {
                Ok(FLAG_STOP) => {
                    let _ = done_tx.send(Ok(()));
                }
                Ok(_) => {}
                Err(e) => {
                    let _ = done_tx.send(Err(e));
                }
            }
        })
        .wait()?;
    println!("ready");
    std::io::stdout().flush()?;
    let r = done_rx.recv().unwrap_or_else(|_| Err("pong callback ended".into()));
    std::thread::sleep(Duration::from_millis(50)); // the STOP echo leaves before the session closes
    sub.undeclare().wait()?;
    s.close().wait()?;
    r
}

/// The sink of z_sub_thr: a subscriber callback that checks, counts and times
/// every message; the main thread prints the result once STOP arrived.
fn role_sink(a: &RoleArgs) -> Res<()> {
    let s = session(&a.endpoint, true)?;
    struct State {
        next: u64,
        lost: u64,
        received: u64,
        lat: Vec<u64>,
        error: Option<String>,
    }
    let mut st = State { next: 0, lost: 0, received: 0, lat: Vec::with_capacity(SINK_SAMPLES), error: None };
    let (done_tx, done_rx) = mpsc::channel::<(State, u64)>();
    let sub = s
        .declare_subscriber(format!("{}/data", a.prefix))
        .callback_mut(move |sample| {
            if st.lat.capacity() == 0 {
                return; // already reported
            }
            let h = match check_shm(sample.payload()) {
                Ok(h) => h,
                Err(e) => {
                    st.error = Some(e.to_string());
                    let _ = done_tx.send((std::mem::replace(&mut st, State { next: 0, lost: 0, received: 0, lat: Vec::new(), error: None }), now_ns()));
                    return;
                }
            };
            drop(sample);
            if h.flags == FLAG_WARMUP {
                return;
            }
            if h.flags == FLAG_STOP {
                let t_end = now_ns();
                st.lost += h.seq.saturating_sub(st.next);
                let _ = done_tx.send((std::mem::replace(&mut st, State { next: 0, lost: 0, received: 0, lat: Vec::new(), error: None }), t_end));
                return;
            }
            if h.seq < st.next {
                st.error = Some(format!("out of order: seq {} after {}", h.seq, st.next - 1));
                return;
            }
            st.lost += h.seq - st.next;
            st.next = h.seq + 1;
            st.received += 1;
            if h.t_send != UNTIMED && st.lat.len() < SINK_SAMPLES {
                st.lat.push(now_ns().saturating_sub(h.t_send));
            }
        })
        .wait()?;
    println!("ready");
    std::io::stdout().flush()?;
    let (st, t_end) = done_rx.recv().map_err(|_| "sink callback ended")?;
    sub.undeclare().wait()?;
    s.close().wait()?;
    if let Some(e) = st.error {
        return Err(e.into());
    }
    // First line: received lost t_end; then the latency samples.
    let mut out = std::io::BufWriter::new(std::io::stdout());
    writeln!(out, "{} {} {t_end}", st.received, st.lost)?;
    for v in st.lat {
        writeln!(out, "{v}")?;
    }
    out.flush()?;
    Ok(())
}

// ---- parent --------------------------------------------------------------------

/// A child process; dropped before `finish`, it is killed, so a failed run leaves none behind.
struct Child {
    child: Option<std::process::Child>,
    out: BufReader<std::process::ChildStdout>,
}

impl Drop for Child {
    fn drop(&mut self) {
        if let Some(mut c) = self.child.take() {
            let _ = c.kill();
            let _ = c.wait();
        }
    }
}

fn spawn(role: &str, prefix: &str, size: usize, cpu: i64, endpoint: &str, depth: usize) -> Res<Child> {
    let exe = std::env::current_exe()?;
    let args = ["--role".to_string(), role.into(), prefix.into(), size.to_string(), cpu.to_string(), endpoint.into(), depth.to_string()];
    let mut child = Command::new(exe).args(args).stdout(Stdio::piped()).spawn()?;
    let out = BufReader::new(child.stdout.take().ok_or("no stdout")?);
    let mut c = Child { child: Some(child), out };
    let mut line = String::new();
    c.out.read_line(&mut line)?;
    if line.trim() != "ready" {
        return Err(format!("{role} child did not start").into());
    }
    Ok(c)
}

/// Reads the child's remaining output and waits for it to exit.
fn finish(mut c: Child) -> Res<String> {
    let mut rest = String::new();
    let _ = std::io::Read::read_to_string(&mut c.out, &mut rest);
    let st = c.child.take().ok_or("child already gone")?.wait()?;
    if !st.success() {
        return Err(format!("child failed: {st}").into());
    }
    Ok(rest)
}

#[allow(clippy::too_many_arguments)]
fn row(workload: &str, size: usize, latency: &str, p: (f64, f64, f64, f64), iters: usize, msgs: f64, gbps: f64, lost: u64, cpus: usize) -> String {
    let pinning = if cpus >= 2 { "one CPU each" } else { "shared CPUs" };
    format!(
        "{{\"workload\":\"{workload}\",\"transport\":\"zenoh\",\"family\":\"peer\",\"size\":{size},\"wait\":\"block\",\
\"processes\":2,\"cpus\":{cpus},\"pinning\":\"{pinning}\",\"latency\":\"{latency}\",\"rt_p50_ns\":{},\"rt_p99_ns\":{},\"rt_p999_ns\":{},\"rt_max_ns\":{},\
\"iterations\":{iters},\"msgs_per_s\":{msgs},\"gbytes_per_s\":{gbps},\"lost\":{lost}}}",
        p.0, p.1, p.2, p.3
    )
}

fn other_cpu(cpus: &[i64]) -> i64 {
    if cpus.len() >= 2 {
        cpus[1]
    } else {
        cpus[0]
    }
}

/// Round trips between two processes (z_ping_shm's loop, every message written and checked).
fn pingpong(prefix: &str, size: usize, cpus: &[i64], full: bool) -> Res<String> {
    let endpoint = format!("tcp/127.0.0.1:{}", free_port()?);
    let depth = queue_depth(size);
    let child = spawn("pong", prefix, size, other_cpu(cpus), &endpoint, depth)?;
    let s = session(&endpoint, false)?;
    let prov = provider(size, depth)?;
    let sub = s.declare_subscriber(format!("{prefix}/rsp")).wait()?;
    let publisher = s
        .declare_publisher(format!("{prefix}/req"))
        .congestion_control(CongestionControl::Block)
        .express(true)
        .wait()?;
    wait_matching(&publisher, "the ping requests")?;
    // Warm-up, untimed: repeat the first request until a reply shows both routes up.
    let deadline = Instant::now() + SETUP_BOUND;
    loop {
        send(&prov, &publisher, size, 0, now_ns(), 0, FLAG_WARMUP)?;
        if sub.recv_timeout(Duration::from_millis(100))?.is_some() {
            break;
        }
        if Instant::now() > deadline {
            return Err(format!("no reply within {} s", SETUP_BOUND.as_secs()).into());
        }
    }
    let budget: u64 = if full { 3_000_000_000 } else { 300_000_000 };
    let (warmup, iters): (u64, u64) = if full { (2000, 100_000) } else { (500, 20_000) };
    let mut lat = Vec::with_capacity(iters as usize);
    let mut t_start = 0;
    let mut t_end = 0;
    for i in 1..=warmup + iters {
        let timed = i > warmup;
        let t0 = now_ns();
        if i == warmup + 1 {
            t_start = t0;
        }
        send(&prov, &publisher, size, i, t0, 0, if timed { FLAG_DATA } else { FLAG_WARMUP })?;
        let h = loop {
            let sample = sub.recv()?;
            let h = check_shm(sample.payload())?;
            if h.flags == FLAG_WARMUP && h.seq != i {
                continue; // a late reply to a repeated first request
            }
            break h;
        };
        let t1 = now_ns();
        if h.seq != i || h.sender != 1 {
            return Err(format!("reply out of order: expected {i}, got {}", h.seq).into());
        }
        if timed {
            lat.push(t1 - t0);
            t_end = t1;
            if t1 - t_start > budget {
                break;
            }
        }
    }
    send(&prov, &publisher, HEADER, 0, now_ns(), 0, FLAG_STOP)?;
    let _ = sub.recv_timeout(SETUP_BOUND)?; // the pong's STOP echo: it saw the end
    finish(child)?;
    s.close().wait()?;
    let n = lat.len();
    let secs = (t_end - t_start) as f64 / 1e9;
    let rate = n as f64 / secs;
    Ok(row("pingpong", size, "round trip", percentiles(lat), n, rate, rate * 2.0 * size as f64 / 1e9, 0, cpus.len().min(2)))
}

/// One publisher, one subscriber, flat out (z_pub_shm_thr / z_sub_thr with
/// every message written and checked): every message must arrive, in order.
fn stream(prefix: &str, size: usize, cpus: &[i64], full: bool) -> Res<String> {
    let endpoint = format!("tcp/127.0.0.1:{}", free_port()?);
    let depth = queue_depth(size);
    let child = spawn("sink", prefix, size, other_cpu(cpus), &endpoint, depth)?;
    let s = session(&endpoint, false)?;
    let prov = provider(size, depth)?;
    let publisher = s
        .declare_publisher(format!("{prefix}/data"))
        // As z_pub_shm_thr: "make sure to not drop messages because of congestion control".
        .congestion_control(CongestionControl::Block)
        .wait()?;
    wait_matching(&publisher, "the stream")?;
    let budget: u64 = if full { 3_000_000_000 } else { 300_000_000 };
    let cap: u64 = (if full { 8u64 << 30 } else { 1u64 << 30 }) / size as u64;
    let iters = cap.min(if full { 5_000_000 } else { 500_000 });
    for i in 0..1000u64.min(iters / 10 + 1) {
        send(&prov, &publisher, size, i, now_ns(), 0, FLAG_WARMUP)?;
    }
    let t_start = now_ns();
    let mut sent = 0;
    for i in 0..iters {
        // Flat out: one message in 64 carries a send time, whose clock reading also checks the budget.
        let t_send = if i % LATENCY_EVERY == 0 { now_ns() } else { UNTIMED };
        send(&prov, &publisher, size, i, t_send, 0, FLAG_DATA)?;
        sent = i + 1;
        if t_send != UNTIMED && t_send - t_start > budget {
            break;
        }
    }
    send(&prov, &publisher, HEADER, sent, now_ns(), 0, FLAG_STOP)?;
    // Session, publisher and provider live until the sink has seen STOP and exited.
    let out = finish(child)?;
    drop(publisher);
    s.close().wait()?;
    let mut lines = out.lines();
    let head: Vec<u64> = lines.next().unwrap_or("").split_whitespace().filter_map(|s| s.parse().ok()).collect();
    if head.len() < 3 {
        return Err(format!("subscriber reported nothing: {out}").into());
    }
    let (received, lost, t_end) = (head[0], head[1], head[2]);
    if received + lost != sent {
        return Err(format!("subscriber count wrong: sent {sent}, received {received}, lost {lost}").into());
    }
    let lat: Vec<u64> = lines.filter_map(|l| l.parse::<u64>().ok()).collect();
    let secs = (t_end.saturating_sub(t_start)) as f64 / 1e9;
    let rate = received as f64 / secs;
    let gbps = received as f64 * size as f64 / secs / 1e9;
    Ok(row("stream", size, "one way", percentiles(lat), received as usize, rate, gbps, lost, cpus.len().min(2)))
}

fn main() {
    let args: Vec<String> = std::env::args().collect();
    if args.len() == 8 && args[1] == "--role" {
        pin(args[5].parse().unwrap_or(-1));
        let a = RoleArgs {
            prefix: args[3].clone(),
            size: args[4].parse().unwrap_or(64).max(HEADER),
            endpoint: args[6].clone(),
            depth: args[7].parse().unwrap_or(1024).max(1),
        };
        let r = if args[2] == "pong" { role_pong(&a) } else { role_sink(&a) };
        if let Err(e) = r {
            eprintln!("zipc-bench-zenoh ({}): {e}", args[2]);
            std::process::exit(3);
        }
        return;
    }
    // Rows: ping-pong 64 B and 4 KiB, stream 100 B and 64 KiB; each in a
    // process of its own (peer::run_rows), so one that stalls (a stream whose
    // STOP never reached the sink, seen once) is killed and named, and the
    // others still run.
    let names: Vec<RowName> = [("pingpong", 64usize), ("pingpong", 4096), ("stream", 100), ("stream", 65536)]
        .into_iter()
        .map(|(workload, size)| RowName { workload: workload.into(), size, wait: "block" })
        .collect();
    let cpus = allowed_cpus();
    if let Some((k, full)) = row_arg(&args) {
        let Some(r) = k.parse::<usize>().ok().and_then(|k| names.get(k)) else {
            eprintln!("zipc-bench-zenoh: --row {k}: no such row");
            std::process::exit(2);
        };
        pin(cpus[0]); // before any session opens: Zenoh's threads inherit this CPU
        let prefix = format!("zipcb/{}/{k}", std::process::id());
        let result = if r.workload == "pingpong" { pingpong(&prefix, r.size, &cpus, full) } else { stream(&prefix, r.size, &cpus, full) };
        match result {
            Ok(row) => println!("{row}"),
            Err(e) => {
                eprintln!("zipc-bench-zenoh: {} {} B: {e}", r.workload, r.size);
                std::process::exit(1);
            }
        }
        return;
    }
    let (full, out) = parse_peer_args(&args, "Zenoh publish-subscribe over shared memory between two processes");
    // A killed row's SHM segments stay in /dev/shm until someone removes the
    // orphans, as Zenoh leaves it to; so do those of rows that ended normally.
    let rows = run_rows("zipc-bench-zenoh", "zenoh", &names, full, &zenoh::shm::cleanup_orphaned_shm_segments);
    zenoh::shm::cleanup_orphaned_shm_segments();
    let text = format!("[\n{}\n]\n", rows.join(",\n"));
    if let Err(e) = std::fs::write(&out, text) {
        eprintln!("zipc-bench-zenoh: cannot write {out}: {e}");
        std::process::exit(1);
    }
}
