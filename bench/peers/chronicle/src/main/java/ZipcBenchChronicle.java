// zipc-bench-chronicle: Chronicle Queue against zipc's topic log rows
// (bench/extra/topic_log.cpp, docs/design/peers.md "Chronicle Queue").
//
//   zipc-bench-chronicle [--full] [--smoke] [--records N] --out FILE
//
// Rows, each from separate JVM processes over a queue in /dev/shm:
//   topic-log-publish  one appender writes N records of 1 KiB;
//   topic-log-read     a fresh tailer in another process replays them all from the start;
//   topic-log-live     appender and tailer at once, the tailer reading each record as it lands.
// A record is zipc's: message number (8 bytes), status byte, text content. The
// writer writes every byte of it; the reader copies every byte out and checks
// number, status and text. Before its timed window every process warms its JIT
// up on a scratch queue of its own (write and read the same way), opens the
// measured queue and its appender or tailer, says "ready" and waits for "go":
// no set-up inside the window. One invocation measures each row once;
// zipc-bench runs the program several times and merges the rows (spreads).
import com.sun.management.OperatingSystemMXBean;
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
import net.openhft.chronicle.bytes.Bytes;
import net.openhft.chronicle.core.OS;
import net.openhft.chronicle.core.io.IOTools;
import net.openhft.chronicle.queue.ChronicleQueue;
import net.openhft.chronicle.queue.ExcerptAppender;
import net.openhft.chronicle.queue.ExcerptTailer;
import net.openhft.chronicle.queue.impl.single.SingleChronicleQueueBuilder;
import net.openhft.chronicle.queue.rollcycles.SparseRollCycles;
import net.openhft.chronicle.threads.Pauser;
import net.openhft.chronicle.wire.DocumentContext;

public final class ZipcBenchChronicle
{
    static final int RECORD = 1024;
    static final String TRANSPORT = "chronicle-queue";

    /** zipc's record: number, status byte 1, then the text (topic_log.cpp make_template). */
    static byte[] template()
    {
        final byte[] text = "The quick brown fox jumps over the lazy dog. ".getBytes(StandardCharsets.US_ASCII);
        final byte[] b = new byte[RECORD];
        for (int i = 0; i < RECORD; i++)
        {
            b[i] = text[i % text.length];
        }
        b[8] = 1;
        return b;
    }

    /**
     * The queue as Chronicle's own throughput benchmark builds it (ThroughputPerfMain):
     * LARGE_HOURLY_XSPARSE roll cycle (one file for the whole run, sparse index) and,
     * where files can be sparse (tmpfs can), a 512 GiB block: one mapping for the
     * whole queue, so no roll and no remap falls inside the window.
     */
    static ChronicleQueue open(final String dir)
    {
        final SingleChronicleQueueBuilder b = ChronicleQueue.singleBuilder(dir)
            .rollCycle(SparseRollCycles.LARGE_HOURLY_XSPARSE)
            .blockSize(OS.isSparseFileSupported() ? 512L << 30 : 256L << 20);
        return b.build();
    }

    /** Appends count records numbered from first. */
    static void publish(final ExcerptAppender appender, final byte[] rec, final long first, final long count)
    {
        for (long n = first; n < first + count; n++)
        {
            try (DocumentContext dc = appender.writingDocument())
            {
                final Bytes<?> bytes = dc.wire().bytes();
                bytes.writeLong(n);
                bytes.write(rec, 8, RECORD - 8);
            }
        }
    }

    /** Reads count records numbered from first, waiting for each; false on a wrong record. */
    static boolean consume(final ExcerptTailer tailer, final byte[] want, final long first, final long count)
    {
        final byte[] buf = new byte[RECORD];
        final Pauser pauser = Pauser.balanced();
        long n = first;
        while (n < first + count)
        {
            try (DocumentContext dc = tailer.readingDocument())
            {
                if (!dc.isPresent())
                {
                    pauser.pause();
                    continue;
                }
                pauser.reset();
                final Bytes<?> bytes = dc.wire().bytes();
                if (bytes.readRemaining() != RECORD || bytes.read(buf) != RECORD)
                {
                    return false;
                }
            }
            long number = 0;
            for (int i = 7; i >= 0; i--)
            {
                number = (number << 8) | (buf[i] & 0xff); // writeLong is little-endian
            }
            if (number != n || buf[8] != 1 || !Arrays.equals(buf, 9, RECORD, want, 9, RECORD))
            {
                return false;
            }
            n++;
        }
        return true;
    }

    static long cpuNs()
    {
        return ((OperatingSystemMXBean)ManagementFactory.getOperatingSystemMXBean()).getProcessCpuTime();
    }

    /** JIT warm-up: the same write and read paths on a scratch queue, deleted after. */
    static boolean warmUp(final String scratch, final long records)
    {
        final byte[] rec = template();
        try (ChronicleQueue q = open(scratch);
             ExcerptAppender a = q.createAppender();
             ExcerptTailer t = q.createTailer())
        {
            for (long done = 0; done < records; done += 10_000)
            {
                final long k = Math.min(10_000, records - done);
                publish(a, rec, done, k);
                if (!consume(t, rec, done, k))
                {
                    return false;
                }
            }
        }
        finally
        {
            IOTools.deleteDirWithFiles(scratch);
        }
        return true;
    }

    /** A child: --role pub|read DIR RECORDS WARMUP. Prints "ready", waits for "go", prints "wall_ns cpu_ns". */
    static int child(final String role, final String dir, final long records, final long warmup) throws IOException
    {
        exitWithParent();
        final byte[] rec = template();
        if (!warmUp(dir + "-warm-" + ProcessHandle.current().pid(), warmup))
        {
            System.err.println("zipc-bench-chronicle: warm-up read a wrong record");
            return 1;
        }
        final BufferedReader in = new BufferedReader(new InputStreamReader(System.in, StandardCharsets.UTF_8));
        try (ChronicleQueue q = open(dir))
        {
            final boolean ok;
            final long t0;
            final long c0;
            if ("pub".equals(role))
            {
                try (ExcerptAppender a = q.createAppender())
                {
                    System.out.println("ready");
                    System.out.flush();
                    if (!"go".equals(in.readLine()))
                    {
                        return 1;
                    }
                    c0 = cpuNs();
                    t0 = System.nanoTime();
                    publish(a, rec, 0, records);
                    ok = true;
                }
            }
            else
            {
                try (ExcerptTailer t = q.createTailer().toStart())
                {
                    System.out.println("ready");
                    System.out.flush();
                    if (!"go".equals(in.readLine()))
                    {
                        return 1;
                    }
                    c0 = cpuNs();
                    t0 = System.nanoTime();
                    ok = consume(t, rec, 0, records);
                }
            }
            final long wall = System.nanoTime() - t0;
            final long cpu = cpuNs() - c0;
            if (!ok)
            {
                System.err.println("zipc-bench-chronicle: the tailer read a wrong record");
                return 1;
            }
            System.out.println(wall + " " + cpu);
            System.out.flush();
        }
        return 0;
    }

    // ---- the launcher ----------------------------------------------------------------

    static final List<String> JVM_ARGS = ManagementFactory.getRuntimeMXBean().getInputArguments();
    static final List<Process> CHILDREN = Collections.synchronizedList(new ArrayList<>());

    /** A child ends itself when its launcher is gone (killed by zipc-bench's timeout, say). */
    static void exitWithParent()
    {
        final long ppid = ProcessHandle.current().parent().map(ProcessHandle::pid).orElse(-1L);
        final Thread t = new Thread(() ->
        {
            while (ProcessHandle.of(ppid).map(ProcessHandle::isAlive).orElse(false))
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
            Runtime.getRuntime().halt(4);
        }, "zipc-watchdog");
        t.setDaemon(true);
        t.start();
    }

    record Child(Process process, BufferedReader out) {}

    static Child spawn(final String role, final String dir, final long records, final long warmup) throws IOException
    {
        final List<String> cmd = new ArrayList<>();
        cmd.add(ProcessHandle.current().info().command().orElse("java"));
        cmd.addAll(JVM_ARGS);
        cmd.addAll(List.of("-cp", System.getProperty("java.class.path"), ZipcBenchChronicle.class.getName()));
        cmd.addAll(List.of("--role", role, dir, Long.toString(records), Long.toString(warmup)));
        final Process p = new ProcessBuilder(cmd).redirectError(ProcessBuilder.Redirect.INHERIT).start();
        CHILDREN.add(p);
        final BufferedReader r = new BufferedReader(new InputStreamReader(p.getInputStream(), StandardCharsets.UTF_8));
        String line;
        while ((line = r.readLine()) != null && !"ready".equals(line))
        {
            // Chronicle may print its banner on stdout; skip to our word
        }
        if (line == null)
        {
            throw new IllegalStateException("the " + role + " child ended before it was ready");
        }
        return new Child(p, r);
    }

    static void go(final Child c) throws IOException
    {
        c.process().getOutputStream().write("go\n".getBytes(StandardCharsets.UTF_8));
        c.process().getOutputStream().flush();
    }

    /** {wall_ns, cpu_ns} the child printed; throws when it failed. */
    static long[] result(final Child c) throws Exception
    {
        final String line = c.out().readLine();
        final int rc = c.process().waitFor();
        if (rc != 0 || line == null)
        {
            throw new IllegalStateException("a child exited with status " + rc);
        }
        final String[] f = line.trim().split(" ");
        return new long[] {Long.parseLong(f[0]), Long.parseLong(f[1])};
    }

    static String row(final String workload, final int processes, final long records, final long[] fig)
    {
        final double s = fig[0] / 1e9;
        // As zipc's rows: "subscribers" on the read and live rows only.
        final String subs = "topic-log-publish".equals(workload) ? "" : "\"subscribers\":1,";
        return String.format(Locale.ROOT,
            "{\"workload\":\"%s\",\"transport\":\"%s\",\"family\":\"peer\",\"size\":%d,\"wait\":\"adaptive\"," +
            "\"processes\":%d,%s\"records\":%d,\"ms\":%.3f,\"cpu_ms\":%.3f," +
            "\"msgs_per_s\":%.1f,\"gbytes_per_s\":%.4f,\"lost\":0}",
            workload, TRANSPORT, RECORD, processes, subs,
            records, fig[0] / 1e6, fig[1] / 1e6, records / s, records * (double)RECORD / s / 1e9);
    }

    public static void main(final String[] args) throws Exception
    {
        if (args.length == 5 && "--role".equals(args[0]))
        {
            System.exit(child(args[1], args[2], Long.parseLong(args[3]), Long.parseLong(args[4])));
        }
        String out = null;
        boolean smoke = false;
        long records = 1_000_000;
        for (int i = 0; i < args.length; i++)
        {
            switch (args[i])
            {
                case "--full" -> { } // one measurement per invocation either way; zipc-bench repeats
                case "--smoke" -> smoke = true;
                case "--out" -> out = i + 1 < args.length ? args[++i] : null;
                case "--records" -> records = i + 1 < args.length ? Long.parseLong(args[++i]) : 0;
                default -> out = null;
            }
        }
        if (smoke)
        {
            records = Math.min(records, 2_000);
        }
        if (out == null || records <= 0)
        {
            System.err.println("usage: zipc-bench-chronicle [--full] [--smoke] [--records N] --out FILE\n" +
                "  Chronicle Queue: publish, replay and live read of N x 1 KiB records between JVM processes");
            System.exit(2);
        }
        // C2 compiles a method after ~10,000 calls: 200,000 records warm every path up.
        final long warmup = smoke ? 2_000 : 200_000;
        final String shm = new File("/dev/shm").isDirectory() ? "/dev/shm" : System.getProperty("java.io.tmpdir");
        final String base = shm + "/zipcb-chronicle-" + ProcessHandle.current().pid();
        Runtime.getRuntime().addShutdownHook(new Thread(() ->
        {
            synchronized (CHILDREN)
            {
                CHILDREN.forEach(Process::destroyForcibly);
            }
            for (final File f : new File(shm).listFiles((d, n) -> n.startsWith(new File(base).getName())))
            {
                IOTools.deleteDirWithFiles(f.getPath());
            }
        }));
        final List<String> rows = new ArrayList<>();
        try
        {
            // Publish into a fresh queue, then replay it with a fresh tailer in another process.
            final String log = base + "-log";
            final Child pub = spawn("pub", log, records, warmup);
            go(pub);
            rows.add(row("topic-log-publish", 1, records, result(pub)));
            final Child replay = spawn("read", log, records, warmup);
            go(replay);
            rows.add(row("topic-log-read", 1, records, result(replay)));
            IOTools.deleteDirWithFiles(log);

            // Live: the tailer waits on the empty queue, then the appender starts.
            final String live = base + "-live";
            final Child reader = spawn("read", live, records, warmup);
            final Child writer = spawn("pub", live, records, warmup);
            go(reader);
            go(writer);
            final long[] r = result(reader);
            final long[] w = result(writer);
            rows.add(row("topic-log-live", 2, records, new long[] {Math.max(r[0], w[0]), Math.max(r[1], w[1])}));
            IOTools.deleteDirWithFiles(live);
        }
        catch (final Exception e)
        {
            System.err.println("zipc-bench-chronicle: " + e.getMessage());
            System.exit(1);
        }
        Files.writeString(Path.of(out), "[\n" + String.join(",\n", rows) + "\n]\n");
        System.exit(0);
    }
}
