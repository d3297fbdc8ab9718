// zipc-bench-aeron: Aeron IPC (Maven io.aeron:aeron-all) measured the way
// every zipc-bench transport is: separate processes (JVMs) pinned to separate
// CPUs; the sender writes every payload byte (the zipc-bench message pattern,
// bench/payload.cpp: a 32-byte header, then 8-byte words derived from the
// sequence number) into the term buffer through tryClaim/BufferClaim, the
// receiver reads and checks every byte in place in its FragmentHandler; a wrong
// byte fails the run.
//
// Contract of a zipc-bench extra program: `zipc-bench-aeron [--full] --out FILE`
// writes FILE as a JSON array of result rows (docs/bench.md). `--smoke` runs
// every row with a handful of messages (the ctest).
//
// Set-up follows aeron-samples (EmbeddedPingPong, Ping/Pong, StreamingPublisher,
// RateSubscriber, SampleConfiguration) and aeron-driver's low-latency.properties;
// docs/peers.md says which file and version, and why each choice is fair.

import io.aeron.Aeron;
import io.aeron.ExclusivePublication;
import io.aeron.Publication;
import io.aeron.Subscription;
import io.aeron.driver.MediaDriver;
import io.aeron.driver.ThreadingMode;
import io.aeron.logbuffer.BufferClaim;
import io.aeron.logbuffer.FragmentHandler;
import org.agrona.DirectBuffer;
import org.agrona.IoUtil;
import org.agrona.MutableDirectBuffer;
import org.agrona.concurrent.BackoffIdleStrategy;
import org.agrona.concurrent.BusySpinIdleStrategy;
import org.agrona.concurrent.IdleStrategy;
import org.agrona.concurrent.SleepingIdleStrategy;
import org.agrona.concurrent.YieldingIdleStrategy;

import java.io.BufferedReader;
import java.io.File;
import java.io.IOException;
import java.io.InputStreamReader;
import java.lang.management.ManagementFactory;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Collections;
import java.util.List;
import java.util.Locale;

public final class ZipcBenchAeron
{
    static final String CHANNEL = "aeron:ipc";
    static final int HEADER = 32;
    static final int FLAG_DATA = 0;
    static final int FLAG_WARMUP = 1;
    static final int FLAG_STOP = 2;
    static final int LATENCY_EVERY = 64; // kLatencyEvery, bench/runner.cpp
    static final long UNTIMED = 0;
    static final int FRAGMENT_LIMIT = 10; // round trips: SampleConfiguration.FRAGMENT_COUNT_LIMIT
    static final int STREAM_FRAGMENT_LIMIT = 128; // streams: FRAGMENT_LIMIT of real-logic/benchmarks' AeronExclusiveIpcBenchmark
    static final int SINK_SAMPLES = 1 << 20;

    // ---- the zipc-bench message pattern (identical to bench/payload.cpp) ----

    static long seed(final long seq, final int sender, final int flags)
    {
        return (seq * 0x9E3779B97F4A7C15L) ^ ((long)sender << 48) ^ (flags & 0xFFFFFFFFL);
    }

    static void fill(
        final MutableDirectBuffer b, final int at, final int n, final long seq, final long tSend, final int sender,
        final int flags)
    {
        b.putLong(at, seq);
        b.putLong(at + 8, tSend);
        b.putInt(at + 16, sender);
        b.putInt(at + 20, flags);
        b.putLong(at + 24, 0);
        final long s = seed(seq, sender, flags);
        int off = HEADER;
        long i = 0;
        for (; off + 8 <= n; off += 8, i++)
        {
            b.putLong(at + off, s + i);
        }
        for (; off < n; off++, i++)
        {
            b.putByte(at + off, (byte)(s + i));
        }
    }

    /** Reads every byte; false if any differs from the pattern its header names. */
    static boolean check(final DirectBuffer b, final int at, final int n)
    {
        if (n < HEADER)
        {
            return false;
        }
        final long s = seed(b.getLong(at), b.getInt(at + 16), b.getInt(at + 20));
        long diff = 0;
        int off = HEADER;
        long i = 0;
        for (; off + 8 <= n; off += 8, i++)
        {
            diff |= b.getLong(at + off) ^ (s + i);
        }
        for (; off < n; off++, i++)
        {
            diff |= (b.getByte(at + off) ^ (byte)(s + i)) & 0xFF;
        }
        return diff == 0;
    }

    /**
     * The idle strategy a row's processes use while they wait (for a message, or
     * for room to claim), by the row's wait class:
     * busy, one CPU per process: "spin", BusySpinIdleStrategy (SampleConfiguration's default);
     * busy, more processes than CPUs: "yield", YieldingIdleStrategy, which never
     * sleeps either but lets the process it waits for run;
     * adaptive: "backoff", Aeron's default idle strategy, which spins, yields, then
     * parks from 1 us doubling to 1 ms (Configuration.IDLE_MAX_SPINS 10,
     * IDLE_MAX_YIELDS 20, IDLE_MIN_PARK_NS, IDLE_MAX_PARK_NS), like zipc's adaptive
     * wait (spin, yield, then sleep);
     * block: "sleep", SleepingIdleStrategy with Agrona's default period (1 us):
     * every empty poll sleeps, as zipc's blocking wait sleeps at once.
     */
    static IdleStrategy idleFor(final String name)
    {
        return switch (name)
        {
            case "spin" -> new BusySpinIdleStrategy();
            case "yield" -> new YieldingIdleStrategy();
            case "backoff" -> new BackoffIdleStrategy(10, 20, 1000, 1_000_000);
            default -> new SleepingIdleStrategy();
        };
    }

    static String idleName(final String wait, final int procs, final int cpus)
    {
        return switch (wait)
        {
            case "block" -> "sleep";
            case "adaptive" -> "backoff";
            default -> procs <= cpus ? "spin" : "yield";
        };
    }

    static void send(
        final ExclusivePublication pub, final BufferClaim claim, final IdleStrategy idle, final int size,
        final long seq, final long tSend, final int sender, final int flags)
    {
        idle.reset();
        long r;
        while ((r = pub.tryClaim(size, claim)) <= 0)
        {
            if (r == Publication.CLOSED || r == Publication.MAX_POSITION_EXCEEDED)
            {
                throw new IllegalStateException("tryClaim failed: " + Publication.errorString(r));
            }
            idle.idle();
        }
        fill(claim.buffer(), claim.offset(), size, seq, tSend, sender, flags);
        claim.commit();
    }

    static Aeron connect(final String dir)
    {
        // Pre-touch the mapped log as low-latency.properties does (aeron.pre.touch.mapped.memory):
        // page faults happen when a process maps a publication or image, not in a timed window.
        return Aeron.connect(new Aeron.Context().aeronDirectoryName(dir).preTouchMappedMemory(true));
    }

    static void awaitConnected(final ExclusivePublication pub, final Subscription sub) throws InterruptedException
    {
        while (!pub.isConnected() || (sub != null && !sub.isConnected()))
        {
            Thread.sleep(1);
        }
    }

    // ---- child roles --------------------------------------------------------

    /** Received-message state of one process: a handler writes it, the loop reads it. */
    static final class Inbox
    {
        long seq;
        long tSend;
        int sender;
        int flags;
        int length;
        boolean got;
        String error;
    }

    static FragmentHandler handlerInto(final Inbox in, final int size)
    {
        return (buffer, offset, length, header) ->
        {
            if (length != size || !check(buffer, offset, length))
            {
                in.error = "payload check failed: " + length + " bytes at seq " + buffer.getLong(offset);
            }
            in.seq = buffer.getLong(offset);
            in.tSend = buffer.getLong(offset + 8);
            in.sender = buffer.getInt(offset + 16);
            in.flags = buffer.getInt(offset + 20);
            in.length = length;
            in.got = true;
        };
    }

    static void rolePong(final String[] a) throws Exception
    {
        final String dir = a[2];
        final IdleStrategy idle = idleFor(a[3]);
        final int size = Integer.parseInt(a[4]);
        final int pingStream = Integer.parseInt(a[5]);
        final int pongStream = Integer.parseInt(a[6]);
        try (Aeron aeron = connect(dir);
            Subscription sub = aeron.addSubscription(CHANNEL, pingStream);
            ExclusivePublication pub = aeron.addExclusivePublication(CHANNEL, pongStream))
        {
            final BufferClaim claim = new BufferClaim();
            final Inbox in = new Inbox();
            final FragmentHandler h = handlerInto(in, size);
            System.out.println("ready");
            System.out.flush();
            final FragmentHandler one = (buffer, offset, length, header) ->
            {
                if (length == HEADER && buffer.getInt(offset + 20) == FLAG_STOP)
                {
                    in.flags = FLAG_STOP;
                    in.got = true;
                    return;
                }
                h.onFragment(buffer, offset, length, header);
            };
            while (true)
            {
                in.got = false;
                idle.reset();
                while (!in.got)
                {
                    idle.idle(sub.poll(one, 1));
                }
                if (in.error != null)
                {
                    throw new IllegalStateException(in.error);
                }
                if (in.flags == FLAG_STOP)
                {
                    return;
                }
                send(pub, claim, idle, size, in.seq, in.tSend, 1, in.flags);
            }
        }
    }

    static void rolePing(final String[] a) throws Exception
    {
        final String dir = a[2];
        final IdleStrategy idle = idleFor(a[3]);
        final int size = Integer.parseInt(a[4]);
        final int pingStream = Integer.parseInt(a[5]);
        final int pongStream = Integer.parseInt(a[6]);
        final long warmup = Long.parseLong(a[7]);
        final int iters = Integer.parseInt(a[8]);
        final long budgetNs = Long.parseLong(a[9]);
        final long[] lat = new long[iters];
        try (Aeron aeron = connect(dir);
            ExclusivePublication pub = aeron.addExclusivePublication(CHANNEL, pingStream);
            Subscription sub = aeron.addSubscription(CHANNEL, pongStream))
        {
            final BufferClaim claim = new BufferClaim();
            final Inbox in = new Inbox();
            final FragmentHandler h = handlerInto(in, size);
            awaitConnected(pub, sub);
            System.out.println("ready");
            System.out.flush();
            int n = 0;
            long tStart = 0;
            long tEnd = 0;
            for (long i = 0; i < warmup + iters; i++)
            {
                final long t0 = System.nanoTime();
                if (i == warmup)
                {
                    tStart = t0;
                }
                send(pub, claim, idle, size, i, t0, 0, i < warmup ? FLAG_WARMUP : FLAG_DATA);
                in.got = false;
                idle.reset();
                while (!in.got)
                {
                    idle.idle(sub.poll(h, FRAGMENT_LIMIT));
                }
                final long t1 = System.nanoTime();
                if (in.error != null)
                {
                    throw new IllegalStateException(in.error);
                }
                if (in.seq != i || in.sender != 1)
                {
                    throw new IllegalStateException("reply out of order: expected " + i + ", got " + in.seq);
                }
                if (i >= warmup)
                {
                    lat[n++] = t1 - t0;
                    tEnd = t1;
                    if (t1 - tStart > budgetNs)
                    {
                        break;
                    }
                }
            }
            send(pub, claim, idle, HEADER, 0, System.nanoTime(), 0, FLAG_STOP);
            final StringBuilder out = new StringBuilder();
            out.append(n).append(' ').append(tStart).append(' ').append(tEnd).append('\n');
            for (int k = 0; k < n; k++)
            {
                out.append(lat[k]).append('\n');
            }
            System.out.print(out);
            System.out.flush();
        }
    }

    static void rolePub(final String[] a) throws Exception
    {
        final String dir = a[2];
        final IdleStrategy idle = idleFor(a[3]);
        final int size = Integer.parseInt(a[4]);
        final int stream = Integer.parseInt(a[5]);
        final long warmup = Long.parseLong(a[6]);
        final long iters = Long.parseLong(a[7]);
        final long budgetNs = Long.parseLong(a[8]);
        try (Aeron aeron = connect(dir);
            ExclusivePublication pub = aeron.addExclusivePublication(CHANNEL, stream))
        {
            final BufferClaim claim = new BufferClaim();
            final BufferedReader parent = new BufferedReader(new InputStreamReader(System.in, StandardCharsets.UTF_8));
            System.out.println("ready");
            System.out.flush();
            // The first "go": every subscriber has mapped this publication's log.
            awaitGo(parent);
            awaitConnected(pub, null);
            for (long i = 0; i < warmup; i++)
            {
                send(pub, claim, idle, size, i, System.nanoTime(), 0, FLAG_WARMUP);
            }
            // The second "go": every subscriber has read the last warm-up message,
            // so the timed window starts with empty buffers and warm JITs.
            awaitGo(parent);
            final long tStart = System.nanoTime();
            long sent = 0;
            for (long i = 0; i < iters; i++)
            {
                // Flat out: one message in 64 carries a send time, whose clock reading also checks the budget.
                final long tSend = i % LATENCY_EVERY == 0 ? System.nanoTime() : UNTIMED;
                send(pub, claim, idle, size, i, tSend, 0, FLAG_DATA);
                sent = i + 1;
                if (tSend != UNTIMED && tSend - tStart > budgetNs)
                {
                    break;
                }
            }
            send(pub, claim, idle, HEADER, sent, System.nanoTime(), 0, FLAG_STOP);
            System.out.println(sent + " " + tStart);
            System.out.flush();
            // Closing now is safe: a closed IPC publication drains (the driver keeps
            // its log until every subscriber has read to its end).
        }
    }

    static void awaitGo(final BufferedReader parent) throws IOException
    {
        final String go = parent.readLine();
        if (!"go".equals(go))
        {
            throw new IllegalStateException("expected go from the parent, got " + go);
        }
    }

    static void roleSink(final String[] a) throws Exception
    {
        final String dir = a[2];
        final IdleStrategy idle = idleFor(a[3]);
        final int size = Integer.parseInt(a[4]);
        final int stream = Integer.parseInt(a[5]);
        final long lastWarmup = Long.parseLong(a[6]) - 1;
        final long[] lat = new long[SINK_SAMPLES];
        try (Aeron aeron = connect(dir);
            Subscription sub = aeron.addSubscription(CHANNEL, stream))
        {
            // Ready once the publication's image is mapped (and pre-touched), so
            // no mapping happens while the publisher's clock runs.
            while (!sub.isConnected())
            {
                Thread.sleep(1);
            }
            System.out.println("ready");
            System.out.flush();
            final long[] st = new long[5]; // next, lost, received, tEnd, samples
            final boolean[] stop = new boolean[1];
            final String[] err = new String[1];
            final FragmentHandler h = (buffer, offset, length, header) ->
            {
                final int flags = buffer.getInt(offset + 20);
                final long seq = buffer.getLong(offset);
                if (flags == FLAG_STOP)
                {
                    st[3] = System.nanoTime();
                    st[1] += Math.max(0, seq - st[0]);
                    stop[0] = true;
                    return;
                }
                if (length != size || !check(buffer, offset, length))
                {
                    err[0] = "payload check failed: " + length + " bytes at seq " + seq;
                    return;
                }
                if (flags == FLAG_WARMUP)
                {
                    if (seq == lastWarmup)
                    {
                        System.out.println("warm");
                        System.out.flush();
                    }
                    return;
                }
                if (seq < st[0])
                {
                    err[0] = "out of order: seq " + seq + " after " + (st[0] - 1);
                    return;
                }
                st[1] += seq - st[0];
                st[0] = seq + 1;
                st[2]++;
                final long tSend = buffer.getLong(offset + 8);
                if (tSend != UNTIMED && st[4] < SINK_SAMPLES)
                {
                    lat[(int)st[4]++] = System.nanoTime() - tSend;
                }
            };
            while (!stop[0] && err[0] == null)
            {
                idle.idle(sub.poll(h, STREAM_FRAGMENT_LIMIT));
            }
            if (err[0] != null)
            {
                throw new IllegalStateException(err[0]);
            }
            final StringBuilder out = new StringBuilder();
            out.append(st[2]).append(' ').append(st[1]).append(' ').append(st[3]).append('\n');
            for (int k = 0; k < st[4]; k++)
            {
                out.append(lat[k]).append('\n');
            }
            System.out.print(out);
            System.out.flush();
        }
    }

    // ---- parent -------------------------------------------------------------

    static final class Child
    {
        final Process proc;
        final BufferedReader out;

        Child(final Process proc, final BufferedReader out)
        {
            this.proc = proc;
            this.out = out;
        }

        void go() throws IOException
        {
            proc.getOutputStream().write("go\n".getBytes(StandardCharsets.UTF_8));
            proc.getOutputStream().flush();
        }

        List<String> finish() throws IOException, InterruptedException
        {
            final List<String> lines = new ArrayList<>();
            String l;
            while ((l = out.readLine()) != null)
            {
                lines.add(l);
            }
            final int rc = proc.waitFor();
            if (rc != 0)
            {
                throw new IllegalStateException("child exited with status " + rc);
            }
            return lines;
        }
    }

    static final List<String> JVM_ARGS = ManagementFactory.getRuntimeMXBean().getInputArguments();

    /** Every child JVM started, so an error, a timeout or a signal ends them all. */
    static final List<Process> CHILDREN = Collections.synchronizedList(new ArrayList<>());
    /** System.nanoTime() by which the current row must be done (the watchdog's). */
    static volatile long rowDeadlineNs = Long.MAX_VALUE;

    static void endChildren()
    {
        synchronized (CHILDREN)
        {
            for (final Process p : CHILDREN)
            {
                p.destroyForcibly();
            }
        }
    }

    /** A daemon thread that runs action once cond holds, checking every 200 ms. */
    static void watch(final java.util.function.BooleanSupplier cond, final Runnable action)
    {
        final Thread t = new Thread(() ->
        {
            while (!cond.getAsBoolean())
            {
                try
                {
                    Thread.sleep(200);
                }
                catch (final InterruptedException e)
                {
                    return;
                }
            }
            action.run();
        }, "zipc-watchdog");
        t.setDaemon(true);
        t.start();
    }

    /** A child ends itself when its launcher is gone (killed by a timeout, say). */
    static void exitWithParent()
    {
        final long ppid = ProcessHandle.current().parent().map(ProcessHandle::pid).orElse(-1L);
        watch(() -> ProcessHandle.of(ppid).map(h -> !h.isAlive()).orElse(true), () ->
        {
            System.err.println("zipc-bench-aeron: launcher " + ppid + " is gone; ending");
            Runtime.getRuntime().halt(4);
        });
    }

    /** Aeron directories of launchers that no longer run (killed before they could delete theirs). */
    static void removeStaleDirs(final String shm)
    {
        final File[] entries = new File(shm).listFiles((d, n) -> n.startsWith("zipcb-aeron-"));
        if (entries == null)
        {
            return;
        }
        for (final File f : entries)
        {
            try
            {
                final long pid = Long.parseLong(f.getName().substring("zipcb-aeron-".length()));
                if (ProcessHandle.of(pid).isEmpty())
                {
                    IoUtil.delete(f, true);
                }
            }
            catch (final NumberFormatException e)
            {
                // not one of ours
            }
        }
    }

    static Child spawn(final int cpu, final String... args) throws IOException
    {
        final List<String> cmd = new ArrayList<>();
        if (cpu >= 0 && new File("/usr/bin/taskset").canExecute())
        {
            cmd.addAll(List.of("/usr/bin/taskset", "-c", Integer.toString(cpu)));
        }
        cmd.add(ProcessHandle.current().info().command().orElse("java"));
        cmd.addAll(JVM_ARGS);
        cmd.addAll(List.of("-cp", System.getProperty("java.class.path"), ZipcBenchAeron.class.getName()));
        cmd.addAll(List.of(args));
        final Process p = new ProcessBuilder(cmd).redirectError(ProcessBuilder.Redirect.INHERIT).start();
        CHILDREN.add(p);
        final BufferedReader r = new BufferedReader(new InputStreamReader(p.getInputStream(), StandardCharsets.UTF_8));
        final String line = r.readLine();
        if (!"ready".equals(line))
        {
            p.destroyForcibly();
            throw new IllegalStateException("child " + args[1] + " did not start (said: " + line + ")");
        }
        return new Child(p, r);
    }

    static int[] allowedCpus() throws IOException
    {
        for (final String l : Files.readAllLines(Path.of("/proc/self/status")))
        {
            if (l.startsWith("Cpus_allowed_list:"))
            {
                final List<Integer> v = new ArrayList<>();
                for (final String part : l.substring(18).trim().split(","))
                {
                    final String[] ab = part.split("-");
                    final int lo = Integer.parseInt(ab[0].trim());
                    final int hi = ab.length > 1 ? Integer.parseInt(ab[1].trim()) : lo;
                    for (int c = lo; c <= hi; c++)
                    {
                        v.add(c);
                    }
                }
                return v.stream().mapToInt(Integer::intValue).toArray();
            }
        }
        return new int[] {-1};
    }

    static double[] percentiles(final long[] v, final int n)
    {
        if (n == 0)
        {
            return new double[] {0, 0, 0, 0};
        }
        Arrays.sort(v, 0, n);
        final double[] q = {0.5, 0.99, 0.999};
        final double[] out = new double[4];
        for (int k = 0; k < 3; k++)
        {
            final int r = (int)Math.ceil(q[k] * n);
            out[k] = v[Math.min(Math.max(r, 1), n) - 1];
        }
        out[3] = v[n - 1];
        return out;
    }

    static String row(
        final String workload, final int size, final String wait, final String latency, final double[] p,
        final long iters, final double msgs, final double gbps, final long lost, final int procs, final int cpus)
    {
        final String idle = idleName(wait, procs, cpus);
        final String pinning = procs <= cpus ? "one CPU each" : "shared CPUs";
        return String.format(Locale.ROOT,
            "{\"workload\":\"%s\",\"transport\":\"aeron-ipc\",\"family\":\"peer\",\"size\":%d,\"wait\":\"%s\"," +
            "\"processes\":%d,\"cpus\":%d,\"pinning\":\"%s\",\"latency\":\"%s\",\"rt_p50_ns\":%.0f," +
            "\"rt_p99_ns\":%.0f,\"rt_p999_ns\":%.0f,\"rt_max_ns\":%.0f,\"iterations\":%d,\"msgs_per_s\":%.1f," +
            "\"gbytes_per_s\":%.6f,\"lost\":%d,\"idle_strategy\":\"%s\"," +
            "\"media_driver\":\"separate process, SHARED threading, backoff idle\"}",
            workload, size, wait, procs, cpus, pinning, latency, p[0], p[1], p[2], p[3], iters, msgs, gbps, lost, idle);
    }

    static final class Plan
    {
        final long pingWarmup;
        final int pingIters;
        final long streamWarmup;
        final long streamIters;
        final long budgetNs;

        Plan(final boolean full, final boolean smoke)
        {
            // Ping-pong warm-up: SampleConfiguration's 10 x 10,000 round trips, so
            // C2 has compiled the hot paths before the first timed one.
            pingWarmup = smoke ? 200 : 100_000;
            pingIters = smoke ? 200 : full ? 1_000_000 : 100_000;
            streamWarmup = smoke ? 1_000 : 200_000;
            streamIters = smoke ? 2_000 : full ? 200_000_000 : 20_000_000;
            budgetNs = smoke ? 50_000_000L : full ? 3_000_000_000L : 300_000_000L;
        }
    }

    static String pingpong(
        final String dir, final int streamBase, final int size, final String wait, final int[] cpus, final Plan plan)
        throws Exception
    {
        final int other = cpus.length >= 2 ? cpus[1] : cpus[0];
        final String ping = Integer.toString(streamBase);
        final String pong = Integer.toString(streamBase + 1);
        final String sz = Integer.toString(size);
        final String idle = idleName(wait, 2, Math.min(cpus.length, 2));
        final Child pongChild = spawn(other, "--role", "pong", dir, idle, sz, ping, pong);
        final Child pingChild = spawn(cpus[0], "--role", "ping", dir, idle, sz, ping, pong,
            Long.toString(plan.pingWarmup), Integer.toString(plan.pingIters), Long.toString(plan.budgetNs));
        final List<String> lines = pingChild.finish();
        pongChild.finish();
        final String[] head = lines.get(0).trim().split(" ");
        final int n = Integer.parseInt(head[0]);
        final double secs = (Long.parseLong(head[2]) - Long.parseLong(head[1])) / 1e9;
        final long[] lat = new long[n];
        for (int k = 0; k < n; k++)
        {
            lat[k] = Long.parseLong(lines.get(k + 1).trim());
        }
        final double rate = n / secs;
        return row("pingpong", size, wait, "round trip", percentiles(lat, n), n, rate, rate * 2.0 * size / 1e9, 0,
            2, Math.min(cpus.length, 2));
    }

    static String fanout(
        final String dir, final int stream, final String workload, final int size, final int subs, final String wait,
        final int[] cpus, final Plan plan) throws Exception
    {
        final String idle = idleName(wait, subs + 1, Math.min(cpus.length, subs + 1));
        final long cap = (1L << 30) / size * (plan.streamIters > 20_000_000 ? 8 : 1);
        final Child pub = spawn(cpus[0], "--role", "pub", dir, idle, Integer.toString(size),
            Integer.toString(stream), Long.toString(plan.streamWarmup), Long.toString(Math.min(cap, plan.streamIters)),
            Long.toString(plan.budgetNs));
        final List<Child> sinks = new ArrayList<>();
        for (int k = 0; k < subs; k++)
        {
            final int cpu = cpus.length >= 2 ? cpus[(k + 1) % cpus.length] : -1;
            sinks.add(spawn(cpu, "--role", "sink", dir, idle, Integer.toString(size), Integer.toString(stream),
                Long.toString(plan.streamWarmup)));
        }
        pub.go();
        for (final Child c : sinks)
        {
            final String line = c.out.readLine();
            if (!"warm".equals(line))
            {
                throw new IllegalStateException("subscriber did not finish its warm-up (said: " + line + ")");
            }
        }
        pub.go();
        final String[] ph = pub.finish().get(0).trim().split(" ");
        final long sent = Long.parseLong(ph[0]);
        final long tStart = Long.parseLong(ph[1]);
        long tEnd = 0;
        long delivered = 0;
        final List<Long> lat = new ArrayList<>();
        for (final Child c : sinks)
        {
            final List<String> lines = c.finish();
            final String[] head = lines.get(0).trim().split(" ");
            final long received = Long.parseLong(head[0]);
            final long lost = Long.parseLong(head[1]);
            if (lost != 0 || received != sent)
            {
                throw new IllegalStateException("subscriber lost messages: sent " + sent + ", received " + received);
            }
            delivered += received;
            tEnd = Math.max(tEnd, Long.parseLong(head[2]));
            for (int k = 1; k < lines.size(); k++)
            {
                lat.add(Long.parseLong(lines.get(k).trim()));
            }
        }
        final long[] v = lat.stream().mapToLong(Long::longValue).toArray();
        final double secs = (tEnd - tStart) / 1e9;
        final double rate = sent / secs;
        final int procs = subs + 1;
        return row(workload, size, wait, "one way", percentiles(v, v.length), delivered, rate,
            delivered * (double)size / secs / 1e9, 0, procs, Math.min(cpus.length, procs));
    }

    public static void main(final String[] args) throws Exception
    {
        if (args.length >= 2 && "--role".equals(args[0]))
        {
            exitWithParent();
            try
            {
                switch (args[1])
                {
                    case "pong" -> rolePong(args);
                    case "ping" -> rolePing(args);
                    case "pub" -> rolePub(args);
                    default -> roleSink(args);
                }
            }
            catch (final Exception e)
            {
                System.err.println("zipc-bench-aeron (" + args[1] + "): " + e.getMessage());
                System.exit(3);
            }
            System.exit(0);
        }
        boolean full = false;
        boolean smoke = false;
        String out = null;
        for (int i = 0; i < args.length; i++)
        {
            switch (args[i])
            {
                case "--full" -> full = true;
                case "--smoke" -> smoke = true;
                case "--out" -> out = i + 1 < args.length ? args[++i] : null;
                default -> out = null;
            }
        }
        if (out == null)
        {
            System.err.println("usage: zipc-bench-aeron [--full] [--smoke] --out FILE\n" +
                "  Aeron IPC (aeron:ipc) ping-pong, stream and fan-out between JVM processes");
            System.exit(2);
        }
        final int[] cpus = allowedCpus();
        final Plan plan = new Plan(full, smoke);
        final String shm = new File("/dev/shm").isDirectory() ? "/dev/shm" : System.getProperty("java.io.tmpdir");
        final String dir = shm + "/zipcb-aeron-" + ProcessHandle.current().pid();
        removeStaleDirs(shm);
        // On any exit (an error, the watchdog, SIGTERM): no child JVM is left
        // spinning, and no term buffer is left in shared memory.
        Runtime.getRuntime().addShutdownHook(new Thread(() ->
        {
            endChildren();
            IoUtil.delete(new File(dir), true);
        }));
        final long rowLimitNs = (full ? 300L : 60L) * 1_000_000_000L;
        watch(() -> System.nanoTime() > rowDeadlineNs, () ->
        {
            System.err.println("zipc-bench-aeron: a row ran longer than " + rowLimitNs / 1_000_000_000L + " s; ending");
            System.exit(1);
        });
        // The media driver: one per run, in this (unpinned) launcher process, as a
        // separate process from every measured one. Its SHARED threading mode with
        // Aeron's default backoff keeps it off the two measured CPUs; aeron:ipc data
        // never passes through it (publisher and subscribers share the log buffer).
        // Term buffers pre-allocated, not sparse (low-latency.properties).
        final MediaDriver.Context ctx = new MediaDriver.Context()
            .aeronDirectoryName(dir)
            .dirDeleteOnStart(true)
            .dirDeleteOnShutdown(true)
            .threadingMode(ThreadingMode.SHARED)
            .sharedIdleStrategy(new BackoffIdleStrategy(10, 20, 1000, 1_000_000))
            .termBufferSparseFile(false);
        final List<String> rows = new ArrayList<>();
        try (MediaDriver ignored = MediaDriver.launch(ctx))
        {
            int stream = 2000; // a fresh stream id per row: the last row's publication may still linger
            // --smoke: one row of each workload and each idle strategy, for the ctest.
            final List<String> waits = List.of("busy", "adaptive", "block");
            for (final String wait : waits)
            {
                if (!smoke || !"adaptive".equals(wait))
                {
                    rowDeadlineNs = System.nanoTime() + rowLimitNs;
                    rows.add(pingpong(dir, stream, 64, wait, cpus, plan));
                }
                stream += 10;
            }
            for (final String wait : waits)
            {
                if (!smoke || "adaptive".equals(wait))
                {
                    rowDeadlineNs = System.nanoTime() + rowLimitNs;
                    rows.add(fanout(dir, stream, "stream", 100, 1, wait, cpus, plan));
                }
                stream += 10;
            }
            for (final String wait : waits)
            {
                if (!smoke || "busy".equals(wait))
                {
                    rowDeadlineNs = System.nanoTime() + rowLimitNs;
                    rows.add(fanout(dir, stream, "fanout-4", 100, 4, wait, cpus, plan));
                }
                stream += 10;
            }
        }
        catch (final Exception e)
        {
            System.err.println("zipc-bench-aeron: " + e.getMessage());
            System.exit(1); // the shutdown hook ends the children still running
        }
        rowDeadlineNs = Long.MAX_VALUE;
        Files.writeString(Path.of(out), "[\n" + String.join(",\n", rows) + "\n]\n");
        System.exit(0);
    }
}
