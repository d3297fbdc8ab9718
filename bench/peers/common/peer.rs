//! What the Rust peer programs (bench/peers/iceoryx2, bench/peers/zenoh) share
//! with each other and with the C++ harness: the zipc-bench message pattern
//! (bench/payload.cpp), pinning, the clock, the depths of the zipc rows they
//! are compared with, and percentiles. Each peer includes it with
//! `#[path = "../../common/peer.rs"] mod peer;`.
#![allow(dead_code)] // each peer uses its own part

pub const HEADER: usize = 32;
pub const FLAG_DATA: u32 = 0;
pub const FLAG_WARMUP: u32 = 1;
pub const FLAG_STOP: u32 = 2;

pub fn now_ns() -> u64 {
    let mut ts = libc::timespec { tv_sec: 0, tv_nsec: 0 };
    // SAFETY: clock_gettime writes into the timespec we own.
    unsafe { libc::clock_gettime(libc::CLOCK_MONOTONIC, &mut ts) };
    ts.tv_sec as u64 * 1_000_000_000 + ts.tv_nsec as u64
}

/// Pins the calling thread (threads it starts later inherit the mask).
pub fn pin(cpu: i64) {
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

pub fn allowed_cpus() -> Vec<i64> {
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

pub fn seed(seq: u64, sender: u32, flags: u32) -> u64 {
    seq.wrapping_mul(0x9E37_79B9_7F4A_7C15) ^ ((sender as u64) << 48) ^ flags as u64
}

/// Writes the zipc-bench message pattern (identical to bench/payload.cpp).
#[inline(always)]
pub fn fill_words(buf: &mut [u8], seq: u64, t_send: u64, sender: u32, flags: u32) {
    let (hdr, body) = buf.split_at_mut(HEADER);
    hdr[0..8].copy_from_slice(&seq.to_le_bytes());
    hdr[8..16].copy_from_slice(&t_send.to_le_bytes());
    hdr[16..20].copy_from_slice(&sender.to_le_bytes());
    hdr[20..24].copy_from_slice(&flags.to_le_bytes());
    hdr[24..32].fill(0);
    let s = seed(seq, sender, flags);
    let mut words = body.chunks_exact_mut(8);
    let mut i: u64 = 0;
    for w in &mut words {
        w.copy_from_slice(&s.wrapping_add(i).to_le_bytes());
        i += 1;
    }
    for b in words.into_remainder() {
        *b = s.wrapping_add(i) as u8;
        i += 1;
    }
}

#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx2")]
pub unsafe fn fill_avx2(buf: &mut [u8], seq: u64, t_send: u64, sender: u32, flags: u32) {
    fill_words(buf, seq, t_send, sender, flags)
}

/// The AVX2 version where the CPU has it, as bench/payload.cpp's target_clones.
pub fn fill(buf: &mut [u8], seq: u64, t_send: u64, sender: u32, flags: u32) {
    assert!(buf.len() >= HEADER);
    #[cfg(target_arch = "x86_64")]
    if std::is_x86_feature_detected!("avx2") {
        // SAFETY: the CPU supports AVX2 (checked just above).
        return unsafe { fill_avx2(buf, seq, t_send, sender, flags) };
    }
    fill_words(buf, seq, t_send, sender, flags)
}

pub struct Header {
    pub seq: u64,
    pub t_send: u64,
    pub sender: u32,
    pub flags: u32,
}

/// Reads every byte; None if any differs from the pattern.
#[inline(always)]
pub fn check_words(buf: &[u8]) -> Option<Header> {
    if buf.len() < HEADER {
        return None;
    }
    let (hdr, body) = buf.split_at(HEADER);
    let u64_at = |o: usize| u64::from_le_bytes(hdr[o..o + 8].try_into().unwrap());
    let u32_at = |o: usize| u32::from_le_bytes(hdr[o..o + 4].try_into().unwrap());
    let h = Header { seq: u64_at(0), t_send: u64_at(8), sender: u32_at(16), flags: u32_at(20) };
    let s = seed(h.seq, h.sender, h.flags);
    let mut diff: u64 = 0;
    let mut words = body.chunks_exact(8);
    let mut i: u64 = 0;
    for w in &mut words {
        diff |= u64::from_le_bytes(w.try_into().unwrap()) ^ s.wrapping_add(i);
        i += 1;
    }
    for b in words.remainder() {
        diff |= (*b ^ (s.wrapping_add(i) as u8)) as u64;
        i += 1;
    }
    if diff == 0 {
        Some(h)
    } else {
        None
    }
}

#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx2")]
pub unsafe fn check_avx2(buf: &[u8]) -> Option<Header> {
    check_words(buf)
}

/// The AVX2 version where the CPU has it; None if a byte differs from the pattern.
pub fn check(buf: &[u8]) -> Option<Header> {
    #[cfg(target_arch = "x86_64")]
    if std::is_x86_feature_detected!("avx2") {
        // SAFETY: the CPU supports AVX2 (checked just above).
        return unsafe { check_avx2(buf) };
    }
    check_words(buf)
}

/// Messages a zipc-bench queue of this message size holds (bench/transports/zipc_queue.cpp):
/// 1024, halved while they would take more than ~64 MiB.
pub fn queue_depth(size: usize) -> usize {
    let block = size.div_ceil(8) * 8 + 64;
    let mut want = 1024usize;
    while want > 2 && want * block > 64 << 20 {
        want /= 2;
    }
    want
}

/// Clock stamps: one flat-out message in 64 carries its send time (bench/runner.cpp).
pub const LATENCY_EVERY: u64 = 64;
pub const UNTIMED: u64 = 0;
/// Latency samples a sink keeps (allocated before the timed loop; more are counted, not kept).
pub const SINK_SAMPLES: usize = 1 << 20;

pub fn percentiles(mut v: Vec<u64>) -> (f64, f64, f64, f64) {
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


/// The extra-program contract (docs/design/bench.md): `[--full] --out FILE`.
/// Returns (full, out); prints the usage with `what` and exits 2 on anything else.
pub fn parse_peer_args(args: &[String], what: &str) -> (bool, String) {
    let usage = || -> ! {
        eprintln!("usage: {} [--full] --out FILE\n  {what}", args[0]);
        std::process::exit(2);
    };
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
            _ => usage(),
        }
        i += 1;
    }
    match out {
        Some(out) => (full, out),
        None => usage(),
    }
}

// ---- rows in processes of their own -------------------------------------

/// What an error row names a row by: workload, size and wait (with the
/// program's transport, what the harness calls it).
pub struct RowName {
    pub workload: String,
    pub size: usize,
    pub wait: &'static str,
}

/// How long one row may take before it is killed: a row measures for at most
/// 0.3 s (3 s with --full); the rest is set-up, and time slices lost to other
/// processes on a busy host. ZIPC_BENCH_ROW_LIMIT_S sets another limit.
pub fn row_limit(full: bool) -> std::time::Duration {
    let s = std::env::var("ZIPC_BENCH_ROW_LIMIT_S").ok().and_then(|v| v.parse::<f64>().ok()).filter(|s| *s > 0.0 && *s < 1e6);
    std::time::Duration::from_secs_f64(s.unwrap_or(if full { 120.0 } else { 40.0 }))
}

/// `--row K [--full]`: the row this process is to run, when it is a row
/// process (see run_rows), else None.
pub fn row_arg(args: &[String]) -> Option<(String, bool)> {
    if args.len() >= 3 && args[1] == "--row" {
        Some((args[2].clone(), args.get(3).is_some_and(|a| a == "--full")))
    } else {
        None
    }
}

/// Runs row `k` as `<this program> --row k [--full]` in a process group of
/// its own and returns what it printed (its rows as JSON objects). One past
/// `row_limit` is killed with every process it started, `after_kill` removes
/// what the killed processes left, and the row is an error.
fn run_row_process(k: usize, full: bool, after_kill: &dyn Fn()) -> Result<String, String> {
    use std::os::unix::process::CommandExt;
    let exe = std::env::current_exe().map_err(|e| e.to_string())?;
    let mut cmd = std::process::Command::new(exe);
    cmd.arg("--row").arg(k.to_string());
    if full {
        cmd.arg("--full");
    }
    let mut child = cmd.stdout(std::process::Stdio::piped()).process_group(0).spawn().map_err(|e| e.to_string())?;
    let mut stdout = child.stdout.take().ok_or("no stdout")?;
    let reader = std::thread::spawn(move || {
        let mut text = String::new();
        let _ = std::io::Read::read_to_string(&mut stdout, &mut text);
        text
    });
    let limit = row_limit(full);
    let deadline = std::time::Instant::now() + limit;
    let status = loop {
        if let Some(st) = child.try_wait().map_err(|e| e.to_string())? {
            break st;
        }
        if std::time::Instant::now() > deadline {
            // SAFETY: kill has no memory preconditions; the group is the row's own.
            unsafe { libc::kill(-(child.id() as i32), libc::SIGKILL) };
            let _ = child.wait();
            let _ = reader.join();
            after_kill();
            return Err(format!("did not finish within {:.1} s; killed", limit.as_secs_f64()));
        }
        std::thread::sleep(std::time::Duration::from_millis(20));
    };
    let text = reader.join().map_err(|_| "reader thread failed")?;
    if !status.success() {
        return Err(format!("row process failed: {status}"));
    }
    Ok(text.trim().to_string())
}

/// Runs every row in a process of its own (run_row_process), each tried
/// twice: one that fails or stalls both times becomes an error row
/// (docs/design/bench.md), and the rows after it still run. Returns the
/// rows, to be written as a JSON array.
pub fn run_rows(program: &str, transport: &str, rows: &[RowName], full: bool, after_kill: &dyn Fn()) -> Vec<String> {
    let mut out = Vec::new();
    for (k, r) in rows.iter().enumerate() {
        let what = format!("{} {} B {}", r.workload, r.size, r.wait);
        let mut result = run_row_process(k, full, after_kill);
        if let Err(e) = &result {
            eprintln!("{program}: {what}: {e}; trying once more");
            result = run_row_process(k, full, after_kill);
        }
        match result {
            Ok(text) if text.is_empty() => {} // the row chose to write nothing (a set-up it cannot make here)
            Ok(text) => out.push(text),
            Err(e) => {
                eprintln!("{program}: {what}: {e}");
                let e = e.replace('\\', "\\\\").replace('"', "\\\"");
                out.push(format!(
                    "{{\"workload\":\"{}\",\"transport\":\"{transport}\",\"size\":{},\"wait\":\"{}\",\"error\":\"{e}\"}}",
                    r.workload, r.size, r.wait
                ));
            }
        }
    }
    out
}
