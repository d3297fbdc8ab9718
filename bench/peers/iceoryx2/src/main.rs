//! zipc-bench-iceoryx2: iceoryx2 (crates.io) publish-subscribe measured the
//! same way as every zipc-bench transport: two real processes pinned to two
//! CPUs, the sender writes every payload byte (the zipc-bench message pattern:
//! a 32-byte header, then words derived from the sequence number), the
//! receiver reads and checks every byte; a wrong byte fails the run.
//!
//! Contract of a zipc-bench extra program: `zipc-bench-iceoryx2 [--full] --out FILE`
//! writes FILE as a JSON array of result rows (docs/design/bench.md).
//!
//! A reference row, `pingpong-authors`, measures iceoryx2 the way its own
//! benchmark does (src/authors.rs); it is not one of the fair rows.
//!
//! Workloads: ping-pong (64 B .. 64 KiB, round trip; 64 B also with both
//! processes on one CPU), one-way streaming
//! (100 B .. 256 KiB) and fan-out 1 -> 1, 2, 4 subscribers (100 B), latency
//! from the send time, back-pressure on: nothing may be lost. Waiting is busy
//! polling (iceoryx2's lowest-latency mode) with the yield rule of zipc's busy
//! wait, so a "busy" row compares the same wait class (docs/design/peers.md).
//!
//! Like the C++ harness: the pattern is written and checked 8 bytes at a time,
//! in an AVX2 and a baseline version chosen at run time; flat-out senders
//! stamp the clock on one message in 64; latency samples go to a buffer sized
//! before the timed loop; buffer depths are those of the zipc row compared.

mod authors;
#[path = "../../common/peer.rs"]
mod peer;

use peer::*;

use core::mem::MaybeUninit;
use iceoryx2::prelude::*;
use std::io::{BufRead, BufReader, Write};
use std::process::{Command, Stdio};

type Res<T> = Result<T, Box<dyn std::error::Error>>;

/// Writes the pattern into a loaned, not yet initialised chunk (peer::fill).
fn fill_loan(buf: &mut [MaybeUninit<u8>], seq: u64, t_send: u64, sender: u32, flags: u32) {
    // SAFETY: the loaned chunk lies in a mapped shared-memory segment whose bytes
    // are always initialised (a zero-filled mapping, or earlier messages); we only
    // write through this slice before the sample is marked initialised.
    let buf = unsafe { core::slice::from_raw_parts_mut(buf.as_mut_ptr().cast::<u8>(), buf.len()) };
    fill(buf, seq, t_send, sender, flags)
}

// ---- waiting: the rule of zipc's busy wait (src/sync/event.cpp, busy_poll_once) ----
//
// Poll with a PAUSE; read the clock every 256 polls; the first yield comes after
// 50 us without progress, then yields at doubling gaps up to 1 ms. A yield that
// gave the CPU away for more than 5 us shows another thread wants this CPU: from
// then on every clock read yields, until 8 yields in a row came straight back.

const POLLS_PER_CLOCK_READ: u32 = 256;
const FIRST_YIELD_NS: u64 = 50_000;
const MAX_YIELD_GAP_NS: u64 = 1_000_000;
const YIELD_GAVE_AWAY_NS: u64 = 5_000;
const IDLE_YIELDS_TO_FORGET: u32 = 8;

thread_local! {
    static CPU_WANTED: core::cell::Cell<(bool, u32)> = const { core::cell::Cell::new((false, 0)) };
}

#[derive(Default)]
struct Spin {
    polls: u32,
    started: bool,
    next_yield_ns: u64,
    gap_ns: u64,
}

impl Spin {
    #[inline]
    fn once(&mut self) {
        core::hint::spin_loop();
        self.polls = self.polls.wrapping_add(1);
        if self.polls % POLLS_PER_CLOCK_READ != 0 {
            return;
        }
        self.slow();
    }

    #[cold]
    fn slow(&mut self) {
        let now = now_ns();
        let (mut wanted, mut idle) = CPU_WANTED.with(|c| c.get());
        if !self.started {
            self.started = true;
            self.gap_ns = FIRST_YIELD_NS;
            self.next_yield_ns = if wanted { now } else { now + FIRST_YIELD_NS };
        }
        if now < self.next_yield_ns {
            return;
        }
        // SAFETY: sched_yield has no preconditions.
        unsafe { libc::sched_yield() };
        let back = now_ns();
        if back - now > YIELD_GAVE_AWAY_NS {
            wanted = true;
            idle = 0;
        } else if wanted {
            idle += 1;
            if idle >= IDLE_YIELDS_TO_FORGET {
                wanted = false;
            }
        }
        CPU_WANTED.with(|c| c.set((wanted, idle)));
        self.gap_ns = if wanted { 0 } else { (2 * self.gap_ns).clamp(FIRST_YIELD_NS, MAX_YIELD_GAP_NS) };
        self.next_yield_ns = back + self.gap_ns;
    }
}

/// Records a zipc-bench topic holds in flight (bench/transports/zipc_topic.cpp).
const TOPIC_DEPTH: usize = 4096;

type Pub = iceoryx2::port::publisher::Publisher<ipc::Service, [u8], ()>;
type Sub = iceoryx2::port::subscriber::Subscriber<ipc::Service, [u8], ()>;

fn service(node: &Node<ipc::Service>, name: &str, buffer: usize, subs: usize) -> Res<iceoryx2::service::port_factory::publish_subscribe::PortFactory<ipc::Service, [u8], ()>> {
    let sn: ServiceName = name.try_into()?;
    Ok(node
        .service_builder(&sn)
        .publish_subscribe::<[u8]>()
        .max_publishers(1)
        .max_subscribers(subs)
        .history_size(0)
        .subscriber_max_buffer_size(buffer)
        .enable_safe_overflow(false)
        .open_or_create()?)
}

type Notifier = iceoryx2::port::notifier::Notifier<ipc::Service>;
type Listener = iceoryx2::port::listener::Listener<ipc::Service>;

/// The wait class of a row: busy polling, or blocking in iceoryx2's event
/// service (a Listener woken by the publisher's Notifier after each send, as in
/// iceoryx2's examples/rust/event_based_communication).
#[derive(Clone, Copy, PartialEq)]
enum Wait {
    Busy,
    Block,
}

impl Wait {
    fn name(self) -> &'static str {
        match self {
            Wait::Busy => "busy",
            Wait::Block => "block",
        }
    }
    fn parse(s: &str) -> Wait {
        if s == "block" {
            Wait::Block
        } else {
            Wait::Busy
        }
    }
}

fn event_service(node: &Node<ipc::Service>, name: &str) -> Res<iceoryx2::service::port_factory::event::PortFactory<ipc::Service>> {
    let sn: ServiceName = format!("{name}/event").as_str().try_into()?;
    Ok(node.service_builder(&sn).event().open_or_create()?)
}

/// A publisher and, for blocking rows, the notifier that wakes its subscribers.
struct Out {
    publisher: Pub,
    notifier: Option<Notifier>,
}

/// A subscriber and, for blocking rows, the listener it sleeps on.
struct In {
    subscriber: Sub,
    listener: Option<Listener>,
}

fn publisher(node: &Node<ipc::Service>, name: &str, size: usize, buffer: usize, subs: usize, wait: Wait) -> Res<Out> {
    let publisher = service(node, name, buffer, subs)?
        .publisher_builder()
        .initial_max_slice_len(size)
        .backpressure_strategy(BackpressureStrategy::RetryUntilDelivered)
        .create()?;
    let notifier = match wait {
        Wait::Block => Some(event_service(node, name)?.notifier_builder().create()?),
        Wait::Busy => None,
    };
    Ok(Out { publisher, notifier })
}

fn subscriber(node: &Node<ipc::Service>, name: &str, buffer: usize, subs: usize, wait: Wait) -> Res<In> {
    let subscriber = service(node, name, buffer, subs)?.subscriber_builder().buffer_size(buffer).create()?;
    let listener = match wait {
        Wait::Block => Some(event_service(node, name)?.listener_builder().create()?),
        Wait::Busy => None,
    };
    Ok(In { subscriber, listener })
}

fn send(out: &Out, size: usize, seq: u64, t_send: u64, sender: u32, flags: u32) -> Res<()> {
    let p = &out.publisher;
    let mut spin = Spin::default();
    let mut s = loop {
        match p.loan_slice_uninit(size) {
            Ok(s) => break s,
            Err(_) => spin.once(), // every sample in flight: wait for the reader
        }
    };
    fill_loan(s.payload_mut(), seq, t_send, sender, flags);
    // SAFETY: fill_loan() wrote every byte of the payload.
    let s = unsafe { s.assume_init() };
    s.send()?;
    if let Some(n) = &out.notifier {
        n.notify()?;
    }
    Ok(())
}

/// Waits for the next message (busy polling or the listener) and checks it; returns its header.
fn recv(input: &In) -> Res<Header> {
    let mut spin = Spin::default();
    loop {
        if let Some(sample) = input.subscriber.receive()? {
            return check(sample.payload()).ok_or_else(|| "checksum mismatch: a byte differs from what the sender wrote".into());
        }
        match &input.listener {
            // A notification after the receive above is kept until this wait collects it.
            Some(l) => {
                l.blocking_wait(|_| {})?;
            }
            None => spin.once(),
        }
    }
}

// ---- child roles -------------------------------------------------------

fn role_pong(prefix: &str, size: usize, wait: Wait) -> Res<()> {
    let node = NodeBuilder::new().create::<ipc::Service>()?;
    let depth = queue_depth(size);
    let rx = subscriber(&node, &format!("{prefix}/req"), depth, 1, wait)?;
    let tx = publisher(&node, &format!("{prefix}/rsp"), size, depth, 1, wait)?;
    println!("ready");
    std::io::stdout().flush()?;
    loop {
        let h = recv(&rx)?;
        if h.flags == FLAG_STOP {
            return Ok(());
        }
        send(&tx, size, h.seq, h.t_send, 1, h.flags)?;
    }
}

fn role_sink(prefix: &str, subs: usize, depth: usize, wait: Wait) -> Res<()> {
    let node = NodeBuilder::new().create::<ipc::Service>()?;
    let rx = subscriber(&node, &format!("{prefix}/data"), depth, subs, wait)?;
    let mut lat = Vec::with_capacity(SINK_SAMPLES);
    println!("ready");
    std::io::stdout().flush()?;
    let mut next: u64 = 0;
    let mut lost: u64 = 0;
    let mut received: u64 = 0;
    let t_end;
    loop {
        let h = recv(&rx)?;
        if h.flags == FLAG_WARMUP {
            continue;
        }
        if h.flags == FLAG_STOP {
            t_end = now_ns();
            lost += h.seq.saturating_sub(next);
            break;
        }
        if h.seq < next {
            return Err(format!("out of order: seq {} after {}", h.seq, next - 1).into());
        }
        lost += h.seq - next;
        next = h.seq + 1;
        received += 1;
        if h.t_send == UNTIMED {
            continue; // counted, not timed (see fanout)
        }
        if lat.len() < SINK_SAMPLES {
            lat.push(now_ns().saturating_sub(h.t_send));
        }
    }
    // First line: count lost t_end; then the latency samples (the parent merges subscribers).
    let mut out = std::io::BufWriter::new(std::io::stdout());
    writeln!(out, "{received} {lost} {t_end}")?;
    for v in lat {
        writeln!(out, "{v}")?;
    }
    out.flush()?;
    Ok(())
}

// ---- parent ------------------------------------------------------------

struct Child {
    child: std::process::Child,
    out: BufReader<std::process::ChildStdout>,
}

fn spawn(args: &[String]) -> Res<Child> {
    let exe = std::env::current_exe()?;
    let mut child = Command::new(exe).args(args).stdout(Stdio::piped()).spawn()?;
    let mut out = BufReader::new(child.stdout.take().ok_or("no stdout")?);
    let mut line = String::new();
    out.read_line(&mut line)?;
    if line.trim() != "ready" {
        let _ = child.kill();
        return Err("child did not start".into());
    }
    Ok(Child { child, out })
}

fn finish(mut c: Child) -> Res<String> {
    let mut rest = String::new();
    let _ = std::io::Read::read_to_string(&mut c.out, &mut rest);
    let st = c.child.wait()?;
    if !st.success() {
        return Err(format!("child failed: {st}").into());
    }
    Ok(rest)
}

#[allow(clippy::too_many_arguments)]
fn row(workload: &str, size: usize, wait: Wait, latency: &str, p: (f64, f64, f64, f64), iters: usize, msgs: f64, gbps: f64, lost: u64, procs: usize, cpus: usize) -> String {
    let pinning = if procs <= cpus { "one CPU each" } else { "shared CPUs" };
    let wait = wait.name();
    format!(
        "{{\"workload\":\"{workload}\",\"transport\":\"iceoryx2\",\"family\":\"peer\",\"size\":{size},\"wait\":\"{wait}\",\
\"processes\":{procs},\"cpus\":{cpus},\"pinning\":\"{pinning}\",\"latency\":\"{latency}\",\"rt_p50_ns\":{},\"rt_p99_ns\":{},\"rt_p999_ns\":{},\"rt_max_ns\":{},\
\"iterations\":{iters},\"msgs_per_s\":{msgs},\"gbytes_per_s\":{gbps},\"lost\":{lost}}}",
        p.0, p.1, p.2, p.3
    )
}

/// Round trips between two processes; `cpus` with one entry puts both on that CPU.
fn pingpong(prefix: &str, workload: &str, size: usize, wait: Wait, cpus: &[i64], full: bool) -> Res<String> {
    let node = NodeBuilder::new().create::<ipc::Service>()?;
    let depth = queue_depth(size);
    let tx = publisher(&node, &format!("{prefix}/req"), size, depth, 1, wait)?;
    let rx = subscriber(&node, &format!("{prefix}/rsp"), depth, 1, wait)?;
    let other = if cpus.len() >= 2 { cpus[1] } else { cpus[0] };
    pin(cpus[0]);
    let child = spawn(&["--role".into(), "pong".into(), prefix.into(), size.to_string(), other.to_string(), "1".into(), depth.to_string(), wait.name().into()])?;
    let budget: u64 = if full { 3_000_000_000 } else { 300_000_000 };
    let (warmup, iters): (u64, u64) = if full { (2000, 100_000) } else { (500, 20_000) };
    let warmup = if cpus.len() < 2 { 20 } else { warmup }; // one CPU: each round trip may cost a time slice
    let mut lat = Vec::with_capacity(iters as usize);
    let mut t_start = 0;
    let mut t_end = 0;
    for i in 0..warmup + iters {
        let t0 = now_ns();
        if i == warmup {
            t_start = t0;
        }
        send(&tx, size, i, t0, 0, if i < warmup { FLAG_WARMUP } else { FLAG_DATA })?;
        let h = recv(&rx)?;
        let t1 = now_ns();
        if h.seq != i || h.sender != 1 {
            return Err(format!("reply out of order: expected {i}, got {}", h.seq).into());
        }
        if i >= warmup {
            lat.push(t1 - t0);
            t_end = t1;
            if t1 - t_start > budget {
                break;
            }
        }
    }
    send(&tx, HEADER, 0, now_ns(), 0, FLAG_STOP)?;
    finish(child)?;
    let n = lat.len();
    let secs = (t_end - t_start) as f64 / 1e9;
    let rate = n as f64 / secs;
    Ok(row(workload, size, wait, "round trip", percentiles(lat), n, rate, rate * 2.0 * size as f64 / 1e9, 0, 2, cpus.len().min(2)))
}

/// One publisher, `subs` subscribers (1 = plain streaming): every subscriber
/// must receive every message, in order, every byte intact. `depth`: each
/// subscriber's buffer, that of the zipc row compared (queue for stream, topic
/// for fan-out).
#[allow(clippy::too_many_arguments)]
fn fanout(prefix: &str, workload: &str, size: usize, subs: usize, depth: usize, wait: Wait, cpus: &[i64], full: bool) -> Res<String> {
    let node = NodeBuilder::new().create::<ipc::Service>()?;
    let tx = publisher(&node, &format!("{prefix}/data"), size, depth, subs, wait)?;
    let mut children = Vec::new();
    for k in 0..subs {
        let cpu = if cpus.len() >= 2 { cpus[(k + 1) % cpus.len()] } else { -1 };
        children.push(spawn(&["--role".into(), "sink".into(), prefix.into(), size.to_string(), cpu.to_string(), subs.to_string(), depth.to_string(), wait.name().into()])?);
    }
    let budget: u64 = if full { 3_000_000_000 } else { 300_000_000 };
    let cap: u64 = (if full { 8u64 << 30 } else { 1u64 << 30 }) / size as u64;
    let iters = cap.min(if full { 5_000_000 } else { 500_000 });
    for i in 0..1000u64.min(iters / 10 + 1) {
        send(&tx, size, i, now_ns(), 0, FLAG_WARMUP)?;
    }
    let t_start = now_ns();
    let mut sent = 0;
    for i in 0..iters {
        // Flat out: one message in 64 carries a send time, whose clock reading also checks the budget.
        let t_send = if i % LATENCY_EVERY == 0 { now_ns() } else { UNTIMED };
        send(&tx, size, i, t_send, 0, FLAG_DATA)?;
        sent = i + 1;
        if t_send != UNTIMED && t_send - t_start > budget {
            break;
        }
    }
    send(&tx, HEADER, sent, now_ns(), 0, FLAG_STOP)?;
    let mut lat: Vec<u64> = Vec::new();
    let mut t_end = 0;
    let mut delivered = 0;
    for c in children {
        let out = finish(c)?;
        let mut lines = out.lines();
        let head: Vec<u64> = lines.next().unwrap_or("").split_whitespace().filter_map(|s| s.parse().ok()).collect();
        if head.len() < 3 {
            return Err(format!("subscriber reported nothing: {out}").into());
        }
        if head[1] != 0 || head[0] != sent {
            return Err(format!("subscriber lost messages: sent {sent}, received {}", head[0]).into());
        }
        delivered += head[0];
        t_end = t_end.max(head[2]);
        lat.extend(lines.filter_map(|l| l.parse::<u64>().ok()));
    }
    let secs = (t_end.saturating_sub(t_start)) as f64 / 1e9;
    let rate = sent as f64 / secs;
    let gbps = delivered as f64 * size as f64 / secs / 1e9;
    let procs = subs + 1;
    Ok(row(workload, size, wait, "one way", percentiles(lat), delivered as usize, rate, gbps, 0, procs, cpus.len().min(procs)))
}

/// One row (or, for `Authors`, the reference rows) of the run.
#[derive(Clone, Copy)]
enum Spec {
    Ping { size: usize, wait: Wait, one_cpu: bool },
    Fan { workload: &'static str, size: usize, subs: usize, depth: usize, wait: Wait },
    Authors,
}

impl Spec {
    /// What the harness names the row by.
    fn name(self) -> RowName {
        let (workload, size, wait) = match self {
            Spec::Ping { size, wait, one_cpu } => (if one_cpu { "pingpong-1cpu" } else { "pingpong" }, size, wait.name()),
            Spec::Fan { workload, size, wait, .. } => (workload, size, wait.name()),
            Spec::Authors => ("pingpong-authors", 0, "busy"),
        };
        RowName { workload: workload.into(), size, wait }
    }
}

/// Busy rows (compared with zipc's busy rows), then blocking rows on
/// iceoryx2's event service (compared with zipc's block rows), then the
/// authors' reference rows.
fn specs(full: bool) -> Vec<Spec> {
    let mut v = Vec::new();
    for size in [64usize, 128, 1024, 4096, 65536] {
        v.push(Spec::Ping { size, wait: Wait::Busy, one_cpu: false });
    }
    for size in [64usize, 4096] {
        v.push(Spec::Ping { size, wait: Wait::Block, one_cpu: false });
    }
    // Both processes on ONE CPU: where busy polling collapses.
    for wait in [Wait::Busy, Wait::Block] {
        v.push(Spec::Ping { size: 64, wait, one_cpu: true });
    }
    for (size, wait) in [(100usize, Wait::Busy), (3000, Wait::Busy), (65536, Wait::Busy), (262144, Wait::Busy), (100, Wait::Block), (65536, Wait::Block)] {
        v.push(Spec::Fan { workload: "stream", size, subs: 1, depth: queue_depth(size), wait });
    }
    let fan_sizes: &[usize] = if full { &[100, 65536] } else { &[100] };
    for wait in [Wait::Busy, Wait::Block] {
        for &size in fan_sizes {
            for (subs, workload) in [(1usize, "fanout-1"), (2, "fanout-2"), (4, "fanout-4")] {
                v.push(Spec::Fan { workload, size, subs, depth: TOPIC_DEPTH, wait });
            }
        }
    }
    v.push(Spec::Authors);
    v
}

/// Runs one spec in this process (the `--row` role): its rows as JSON objects.
fn run_spec(spec: Spec, prefix: &str, cpus: &[i64], full: bool) -> Res<Vec<String>> {
    pin(cpus[0]);
    match spec {
        Spec::Ping { size, wait, one_cpu } => {
            let (workload, cpus) = if one_cpu { ("pingpong-1cpu", &cpus[..1]) } else { ("pingpong", cpus) };
            Ok(vec![pingpong(prefix, workload, size, wait, cpus, full)?])
        }
        Spec::Fan { workload, size, subs, depth, wait } => Ok(vec![fanout(prefix, workload, size, subs, depth, wait, cpus, full)?]),
        Spec::Authors => authors::rows(prefix, full, cpus, pin, now_ns),
    }
}

fn main() {
    let args: Vec<String> = std::env::args().collect();
    set_log_level(LogLevel::Error);
    if args.len() >= 6 && args[1] == "--role" {
        pin(args[5].parse().unwrap_or(-1));
        let size: usize = args[4].parse().unwrap_or(64);
        let subs: usize = args.get(6).and_then(|v| v.parse().ok()).unwrap_or(1);
        let depth: usize = args.get(7).and_then(|v| v.parse().ok()).unwrap_or(TOPIC_DEPTH);
        let wait = Wait::parse(args.get(8).map_or("busy", |v| v.as_str()));
        let r = if args[2] == "pong" { role_pong(&args[3], size, wait) } else { role_sink(&args[3], subs, depth, wait) };
        if let Err(e) = r {
            eprintln!("zipc-bench-iceoryx2 ({}): {e}", args[2]);
            std::process::exit(3);
        }
        return;
    }
    let cpus = allowed_cpus();
    if cpus.is_empty() {
        eprintln!("zipc-bench-iceoryx2: no CPU is allowed to this process");
        std::process::exit(1);
    }
    if let Some((k, full)) = row_arg(&args) {
        let specs = specs(full);
        let Some(&spec) = k.parse::<usize>().ok().and_then(|k| specs.get(k)) else {
            eprintln!("zipc-bench-iceoryx2: --row {k}: no such row");
            std::process::exit(2);
        };
        let prefix = format!("zipcb/{}/{k}", std::process::id());
        match run_spec(spec, &prefix, &cpus, full) {
            Ok(rows) => println!("{}", rows.join(",\n")),
            Err(e) => {
                eprintln!("zipc-bench-iceoryx2: {}: {e}", spec.name().workload);
                std::process::exit(1);
            }
        }
        return;
    }
    let (full, out) = parse_peer_args(&args, "iceoryx2 publish-subscribe between two processes");
    // Each row in a process of its own (peer::run_rows). The nodes and
    // services of a killed row stay in /dev/shm until a live node removes
    // them, as iceoryx2 leaves it to.
    let names: Vec<RowName> = specs(full).into_iter().map(Spec::name).collect();
    let cleanup = || {
        if let Ok(node) = NodeBuilder::new().create::<ipc::Service>() {
            let _ = node.try_cleanup_dead_nodes();
        }
    };
    let rows = run_rows("zipc-bench-iceoryx2", "iceoryx2", &names, full, &cleanup);
    let text = format!("[\n{}\n]\n", rows.join(",\n"));
    if let Err(e) = std::fs::write(&out, text) {
        eprintln!("zipc-bench-iceoryx2: cannot write {out}: {e}");
        std::process::exit(1);
    }
}
