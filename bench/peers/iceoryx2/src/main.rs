//! zipc-bench-iceoryx2: iceoryx2 (crates.io) publish-subscribe measured the
//! same way as every zipc-bench transport: two real processes pinned to two
//! CPUs, the sender writes every payload byte (the zipc-bench message pattern:
//! a 32-byte header, then words derived from the sequence number), the
//! receiver reads and checks every byte; a wrong byte fails the run.
//!
//! Contract of a zipc-bench extra program: `zipc-bench-iceoryx2 [--full] --out FILE`
//! writes FILE as a JSON array of result rows (docs/bench.md).
//!
//! Workloads: ping-pong (64 B .. 64 KiB, round trip; 64 B also with both
//! processes on one CPU), one-way streaming
//! (100 B .. 256 KiB) and fan-out 1 -> 1, 2, 4 subscribers (100 B), latency
//! from the send time, back-pressure on: nothing may be lost. Waiting is busy
//! polling (iceoryx2's lowest-latency mode).

use core::mem::MaybeUninit;
use iceoryx2::prelude::*;
use std::io::{BufRead, BufReader, Write};
use std::process::{Command, Stdio};

const HEADER: usize = 32;
const FLAG_DATA: u32 = 0;
const FLAG_WARMUP: u32 = 1;
const FLAG_STOP: u32 = 2;

type Res<T> = Result<T, Box<dyn std::error::Error>>;

fn now_ns() -> u64 {
    let mut ts = libc::timespec { tv_sec: 0, tv_nsec: 0 };
    // SAFETY: clock_gettime writes into the timespec we own.
    unsafe { libc::clock_gettime(libc::CLOCK_MONOTONIC, &mut ts) };
    ts.tv_sec as u64 * 1_000_000_000 + ts.tv_nsec as u64
}

fn pin(cpu: i64) {
    if cpu < 0 {
        return;
    }
    // SAFETY: a zeroed cpu_set_t is valid; we set one bit and pass its size.
    unsafe {
        let mut set: libc::cpu_set_t = core::mem::zeroed();
        libc::CPU_SET(cpu as usize, &mut set);
        libc::sched_setaffinity(0, core::mem::size_of::<libc::cpu_set_t>(), &set);
    }
}

fn allowed_cpus() -> Vec<i64> {
    let mut out = Vec::new();
    // SAFETY: sched_getaffinity fills the set we own.
    unsafe {
        let mut set: libc::cpu_set_t = core::mem::zeroed();
        if libc::sched_getaffinity(0, core::mem::size_of::<libc::cpu_set_t>(), &mut set) == 0 {
            for i in 0..libc::CPU_SETSIZE as usize {
                if libc::CPU_ISSET(i, &set) {
                    out.push(i as i64);
                }
            }
        }
    }
    if out.is_empty() {
        out.push(0);
    }
    out
}

fn seed(seq: u64, sender: u32, flags: u32) -> u64 {
    seq.wrapping_mul(0x9E37_79B9_7F4A_7C15) ^ ((sender as u64) << 48) ^ flags as u64
}

/// Writes the zipc-bench message pattern (identical to bench/payload.cpp).
fn fill(buf: &mut [MaybeUninit<u8>], seq: u64, t_send: u64, sender: u32, flags: u32) {
    let n = buf.len();
    let mut hdr = [0u8; HEADER];
    hdr[0..8].copy_from_slice(&seq.to_le_bytes());
    hdr[8..16].copy_from_slice(&t_send.to_le_bytes());
    hdr[16..20].copy_from_slice(&sender.to_le_bytes());
    hdr[20..24].copy_from_slice(&flags.to_le_bytes());
    for (d, s) in buf[..HEADER].iter_mut().zip(hdr.iter()) {
        d.write(*s);
    }
    let s = seed(seq, sender, flags);
    let mut off = HEADER;
    let mut i: u64 = 0;
    while off + 8 <= n {
        let w = s.wrapping_add(i).to_le_bytes();
        for k in 0..8 {
            buf[off + k].write(w[k]);
        }
        off += 8;
        i += 1;
    }
    while off < n {
        buf[off].write(s.wrapping_add(i) as u8);
        off += 1;
        i += 1;
    }
}

struct Header {
    seq: u64,
    t_send: u64,
    sender: u32,
    flags: u32,
}

/// Reads every byte; None if any differs from the pattern.
fn check(buf: &[u8]) -> Option<Header> {
    if buf.len() < HEADER {
        return None;
    }
    let u64_at = |o: usize| u64::from_le_bytes(buf[o..o + 8].try_into().unwrap());
    let u32_at = |o: usize| u32::from_le_bytes(buf[o..o + 4].try_into().unwrap());
    let h = Header { seq: u64_at(0), t_send: u64_at(8), sender: u32_at(16), flags: u32_at(20) };
    let s = seed(h.seq, h.sender, h.flags);
    let mut diff: u64 = 0;
    let mut off = HEADER;
    let mut i: u64 = 0;
    while off + 8 <= buf.len() {
        diff |= u64_at(off) ^ s.wrapping_add(i);
        off += 8;
        i += 1;
    }
    while off < buf.len() {
        diff |= (buf[off] ^ (s.wrapping_add(i) as u8)) as u64;
        off += 1;
        i += 1;
    }
    if diff == 0 {
        Some(h)
    } else {
        None
    }
}

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

fn publisher(node: &Node<ipc::Service>, name: &str, size: usize, buffer: usize, subs: usize) -> Res<Pub> {
    Ok(service(node, name, buffer, subs)?
        .publisher_builder()
        .initial_max_slice_len(size)
        .backpressure_strategy(BackpressureStrategy::RetryUntilDelivered)
        .create()?)
}

fn subscriber(node: &Node<ipc::Service>, name: &str, buffer: usize, subs: usize) -> Res<Sub> {
    Ok(service(node, name, buffer, subs)?.subscriber_builder().buffer_size(buffer).create()?)
}

fn send(p: &Pub, size: usize, seq: u64, t_send: u64, sender: u32, flags: u32) -> Res<()> {
    let mut s = loop {
        match p.loan_slice_uninit(size) {
            Ok(s) => break s,
            Err(_) => core::hint::spin_loop(), // every sample in flight: wait for the reader
        }
    };
    fill(s.payload_mut(), seq, t_send, sender, flags);
    // SAFETY: fill() wrote every byte of the payload.
    let s = unsafe { s.assume_init() };
    s.send()?;
    Ok(())
}

/// Busy-polls for the next message and checks it; returns its header.
fn recv(s: &Sub) -> Res<Header> {
    loop {
        if let Some(sample) = s.receive()? {
            return check(sample.payload()).ok_or_else(|| "checksum mismatch: a byte differs from what the sender wrote".into());
        }
        core::hint::spin_loop();
    }
}

fn percentiles(mut v: Vec<u64>) -> (f64, f64, f64, f64) {
    if v.is_empty() {
        return (0.0, 0.0, 0.0, 0.0);
    }
    v.sort_unstable();
    let at = |q: f64| {
        let r = (q * v.len() as f64).ceil() as usize;
        v[r.max(1).min(v.len()) - 1] as f64
    };
    (at(0.5), at(0.99), at(0.999), *v.last().unwrap() as f64)
}

// ---- child roles -------------------------------------------------------

fn role_pong(prefix: &str, size: usize) -> Res<()> {
    let node = NodeBuilder::new().create::<ipc::Service>()?;
    let rx = subscriber(&node, &format!("{prefix}/req"), 4, 1)?;
    let tx = publisher(&node, &format!("{prefix}/rsp"), size, 4, 1)?;
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

fn role_sink(prefix: &str, subs: usize) -> Res<()> {
    let node = NodeBuilder::new().create::<ipc::Service>()?;
    let rx = subscriber(&node, &format!("{prefix}/data"), 256, subs)?;
    println!("ready");
    std::io::stdout().flush()?;
    let mut lat = Vec::new();
    let mut next: u64 = 0;
    let mut lost: u64 = 0;
    let mut t_end = 0;
    loop {
        let h = recv(&rx)?;
        let t = now_ns();
        if h.flags == FLAG_WARMUP {
            continue;
        }
        if h.flags == FLAG_STOP {
            lost += h.seq.saturating_sub(next);
            break;
        }
        if h.seq < next {
            return Err(format!("out of order: seq {} after {}", h.seq, next - 1).into());
        }
        lost += h.seq - next;
        next = h.seq + 1;
        lat.push(t.saturating_sub(h.t_send));
        t_end = t;
    }
    // First line: count lost t_end; then every latency sample (the parent merges subscribers).
    let mut out = std::io::BufWriter::new(std::io::stdout());
    writeln!(out, "{} {lost} {t_end}", lat.len())?;
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
fn row(workload: &str, size: usize, latency: &str, p: (f64, f64, f64, f64), iters: usize, msgs: f64, gbps: f64, lost: u64, procs: usize, cpus: usize) -> String {
    let pinning = if procs <= cpus { "one CPU each" } else { "shared CPUs" };
    format!(
        "{{\"workload\":\"{workload}\",\"transport\":\"iceoryx2\",\"family\":\"peer\",\"size\":{size},\"wait\":\"busy\",\
\"processes\":{procs},\"cpus\":{cpus},\"pinning\":\"{pinning}\",\"latency\":\"{latency}\",\"rt_p50_ns\":{},\"rt_p99_ns\":{},\"rt_p999_ns\":{},\"rt_max_ns\":{},\
\"iterations\":{iters},\"msgs_per_s\":{msgs},\"gbytes_per_s\":{gbps},\"lost\":{lost}}}",
        p.0, p.1, p.2, p.3
    )
}

/// Round trips between two processes; `cpus` with one entry puts both on that CPU.
fn pingpong(prefix: &str, workload: &str, size: usize, cpus: &[i64], full: bool) -> Res<String> {
    let node = NodeBuilder::new().create::<ipc::Service>()?;
    let tx = publisher(&node, &format!("{prefix}/req"), size, 4, 1)?;
    let rx = subscriber(&node, &format!("{prefix}/rsp"), 4, 1)?;
    let other = if cpus.len() >= 2 { cpus[1] } else { cpus[0] };
    pin(cpus[0]);
    let child = spawn(&["--role".into(), "pong".into(), prefix.into(), size.to_string(), other.to_string()])?;
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
    Ok(row(workload, size, "round trip", percentiles(lat), n, rate, rate * 2.0 * size as f64 / 1e9, 0, 2, cpus.len().min(2)))
}

/// One publisher, `subs` subscribers (1 = plain streaming): every subscriber
/// must receive every message, in order, every byte intact.
fn fanout(prefix: &str, workload: &str, size: usize, subs: usize, cpus: &[i64], full: bool) -> Res<String> {
    let node = NodeBuilder::new().create::<ipc::Service>()?;
    let tx = publisher(&node, &format!("{prefix}/data"), size, 256, subs)?;
    let mut children = Vec::new();
    for k in 0..subs {
        let cpu = if cpus.len() >= 2 { cpus[(k + 1) % cpus.len()] } else { -1 };
        children.push(spawn(&["--role".into(), "sink".into(), prefix.into(), size.to_string(), cpu.to_string(), subs.to_string()])?);
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
        send(&tx, size, i, now_ns(), 0, FLAG_DATA)?;
        sent = i + 1;
        if i & 63 == 63 && now_ns() - t_start > budget {
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
    Ok(row(workload, size, "one way", percentiles(lat), delivered as usize, rate, gbps, 0, procs, cpus.len().min(procs)))
}

fn main() {
    let args: Vec<String> = std::env::args().collect();
    set_log_level(LogLevel::Error);
    if args.len() >= 6 && args[1] == "--role" {
        pin(args[5].parse().unwrap_or(-1));
        let size: usize = args[4].parse().unwrap_or(64);
        let subs: usize = args.get(6).and_then(|v| v.parse().ok()).unwrap_or(1);
        let r = if args[2] == "pong" { role_pong(&args[3], size) } else { role_sink(&args[3], subs) };
        if let Err(e) = r {
            eprintln!("zipc-bench-iceoryx2 ({}): {e}", args[2]);
            std::process::exit(3);
        }
        return;
    }
    let mut full = false;
    let mut out = None;
    let mut i = 1;
    while i < args.len() {
        match args[i].as_str() {
            "--full" => full = true,
            "--out" if i + 1 < args.len() => {
                out = Some(args[i + 1].clone());
                i += 1;
            }
            _ => {
                eprintln!("usage: {} [--full] --out FILE\n  iceoryx2 publish-subscribe between two processes", args[0]);
                std::process::exit(2);
            }
        }
        i += 1;
    }
    let Some(out) = out else {
        eprintln!("usage: {} [--full] --out FILE", args[0]);
        std::process::exit(2);
    };
    let cpus = allowed_cpus();
    if !cpus.is_empty() {
        pin(cpus[0]);
    }
    let pid = std::process::id();
    let mut rows = Vec::new();
    let mut k = 0;
    let run = |rows: &mut Vec<String>, r: Res<String>, what: &str| match r {
        Ok(s) => rows.push(s),
        Err(e) => {
            eprintln!("zipc-bench-iceoryx2: {what}: {e}");
            std::process::exit(1);
        }
    };
    for size in [64usize, 128, 1024, 4096, 65536] {
        k += 1;
        let r = pingpong(&format!("zipcb/{pid}/{k}"), "pingpong", size, &cpus, full);
        run(&mut rows, r, &format!("pingpong {size} B"));
    }
    // Both processes on ONE CPU: where busy polling collapses.
    k += 1;
    let r = pingpong(&format!("zipcb/{pid}/{k}"), "pingpong-1cpu", 64, &cpus[..1], full);
    run(&mut rows, r, "pingpong-1cpu 64 B");
    pin(cpus[0]);
    for size in [100usize, 3000, 65536, 262144] {
        k += 1;
        let r = fanout(&format!("zipcb/{pid}/{k}"), "stream", size, 1, &cpus, full);
        run(&mut rows, r, &format!("stream {size} B"));
    }
    let fan_sizes: &[usize] = if full { &[100, 65536] } else { &[100] };
    for &size in fan_sizes {
        for subs in [1usize, 2, 4] {
            k += 1;
            let r = fanout(&format!("zipcb/{pid}/{k}"), &format!("fanout-{subs}"), size, subs, &cpus, full);
            run(&mut rows, r, &format!("fanout-{subs} {size} B"));
        }
    }
    let text = format!("[\n{}\n]\n", rows.join(",\n"));
    if let Err(e) = std::fs::write(&out, text) {
        eprintln!("zipc-bench-iceoryx2: cannot write {out}: {e}");
        std::process::exit(1);
    }
}
