"""The transports compared by bench.py, each with Python processes at both ends.

Every transport offers three cases, each as a pair (main side, peer side):
  pingpong(n, size)   the main side sends `size` bytes, the peer echoes; one
                      latency sample (ns) per round trip
  stream(n, size)     the main side produces n messages, the peer consumes them;
                      returns (start_ns, end_ns) on CLOCK_MONOTONIC
  array(n, nbytes)    a numpy array of nbytes per message; the consumer copies
                      it into its own array (the same work for every transport)
A peer runs in a forked process; `ready`/`done` are multiprocessing Events.
"""

from __future__ import annotations

import ctypes
import multiprocessing as mp
import os
import time
from multiprocessing import shared_memory
from typing import Any, Callable, Dict, List, Tuple

import numpy as np

now = time.perf_counter_ns  # CLOCK_MONOTONIC: comparable between processes
STOP = b"S"


class Transport:
    name = "?"

    def setup(self, case: str, size: int) -> None: ...
    def teardown(self) -> None: ...
    # peer sides (run in the child)
    def echo(self, ready: Any) -> None: raise NotImplementedError
    def consume(self, ready: Any, n: int, size: int, out: Any) -> None: raise NotImplementedError
    # main sides
    def pingpong(self, n: int, size: int) -> List[int]: raise NotImplementedError
    # Set-up of the producing side (ports, connections), run before the timed window opens.
    def open_producer(self, size: int) -> None: ...
    def produce(self, n: int, size: int) -> None: raise NotImplementedError


def _consume_array(arr: np.ndarray, dst: np.ndarray) -> None:
    np.copyto(dst, arr)


# ---------------------------------------------------------------- zipc
class Zipc(Transport):
    def __init__(self, wait: str = "adaptive", batch: int = 0) -> None:
        import zipc
        self.zipc = zipc
        self.batch = batch
        self.wait = {"busy": zipc.WaitStrategy.busy, "block": zipc.WaitStrategy.block}.get(wait, zipc.WaitStrategy.adaptive)
        self.name = f"zipc-{wait}" + (f"-batch{batch}" if batch else "")

    def setup(self, case: str, size: int) -> None:
        z = self.zipc
        self.base = f"zb.{os.getpid()}.{case}"
        bs = max(64, (size + 7) // 8 * 8)
        count = 4096 if case == "stream" else (2 if case == "array" else 64)  # array: 2 blocks, as the copy limit
        S = z.Multiplicity.single
        self.ab = z.Queue.create(self.base + ".ab", block_size=bs, block_count=count, producers=S, consumers=S,
                                 wait=self.wait, role=z.Role.producer)
        self.ba = z.Queue.create(self.base + ".ba", block_size=bs, block_count=count, producers=S, consumers=S,
                                 wait=self.wait, role=z.Role.consumer)

    def teardown(self) -> None:
        for q in (self.ab, self.ba):
            q.detach()
        self.zipc.Queue.remove(self.base + ".ab")
        self.zipc.Queue.remove(self.base + ".ba")

    def _open(self) -> Tuple[Any, Any]:
        z = self.zipc
        return (z.Queue.open(self.base + ".ab", wait=self.wait, role=z.Role.consumer),
                z.Queue.open(self.base + ".ba", wait=self.wait, role=z.Role.producer))

    def echo(self, ready: Any) -> None:
        ab, ba = self._open()
        ready.set()
        recv, send = ab.recv, ba.send
        while True:
            m = recv()
            send(m)
            if m == STOP:
                return

    def pingpong(self, n: int, size: int) -> List[int]:
        msg = bytes(size)
        send, recv = self.ab.send, self.ba.recv
        out = []
        for _ in range(n):
            t0 = now()
            send(msg)
            recv()
            out.append(now() - t0)
        send(STOP)
        recv()
        return out

    def consume(self, ready: Any, n: int, size: int, out: Any) -> None:
        ab, _ = self._open()
        ready.set()
        if size > 4096:
            dst = np.empty(size, dtype=np.uint8)
            for _ in range(n):
                with ab.acquire() as view:  # zero copy: the array is read in place
                    _consume_array(np.frombuffer(view, dtype=np.uint8), dst)
        elif self.batch:
            got = 0
            while got < n:
                got += len(ab.recv_batch(4 * self.batch))
        else:
            recv = ab.recv
            for _ in range(n):
                recv()
        out.put(now())

    def produce(self, n: int, size: int) -> None:
        if size > 4096:
            src = np.full(size, 7, dtype=np.uint8)
            for _ in range(n):
                with self.ab.reserve(size) as buf:  # zero copy: written into the block
                    np.copyto(np.frombuffer(buf, dtype=np.uint8), src)
        elif self.batch:
            chunk = [bytes(size)] * self.batch
            left = n
            while left > 0:
                left -= self.ab.send_batch(chunk[:left])
        else:
            msg = bytes(size)
            send = self.ab.send
            for _ in range(n):
                send(msg)


# ---------------------------------------------------------------- multiprocessing.Pipe
class Pipe(Transport):
    name = "mp.Pipe"

    def setup(self, case: str, size: int) -> None:
        self.a, self.b = mp.Pipe(duplex=True)

    def echo(self, ready: Any) -> None:
        ready.set()
        while True:
            m = self.b.recv_bytes()
            self.b.send_bytes(m)
            if m == STOP:
                return

    def pingpong(self, n: int, size: int) -> List[int]:
        msg = bytes(size)
        out = []
        for _ in range(n):
            t0 = now()
            self.a.send_bytes(msg)
            self.a.recv_bytes()
            out.append(now() - t0)
        self.a.send_bytes(STOP)
        self.a.recv_bytes()
        return out

    def consume(self, ready: Any, n: int, size: int, out: Any) -> None:
        ready.set()
        if size > 4096:
            dst = np.empty(size, dtype=np.uint8)
            for _ in range(n):
                _consume_array(np.frombuffer(self.b.recv_bytes(), dtype=np.uint8), dst)
        else:
            for _ in range(n):
                self.b.recv_bytes()
        out.put(now())

    def produce(self, n: int, size: int) -> None:
        if size > 4096:
            src = np.full(size, 7, dtype=np.uint8)
            for _ in range(n):
                self.a.send_bytes(src)
        else:
            msg = bytes(size)
            for _ in range(n):
                self.a.send_bytes(msg)


# ---------------------------------------------------------------- multiprocessing.Queue
class MpQueue(Transport):
    name = "mp.Queue"

    def setup(self, case: str, size: int) -> None:
        self.ab: Any = mp.Queue()
        self.ba: Any = mp.Queue()

    def echo(self, ready: Any) -> None:
        ready.set()
        while True:
            m = self.ab.get()
            self.ba.put(m)
            if m == STOP:
                return

    def pingpong(self, n: int, size: int) -> List[int]:
        msg = bytes(size)
        out = []
        for _ in range(n):
            t0 = now()
            self.ab.put(msg)
            self.ba.get()
            out.append(now() - t0)
        self.ab.put(STOP)
        self.ba.get()
        return out

    def consume(self, ready: Any, n: int, size: int, out: Any) -> None:
        ready.set()
        if size > 4096:
            dst = np.empty(size, dtype=np.uint8)
            for _ in range(n):
                _consume_array(self.ab.get(), dst)
        else:
            for _ in range(n):
                self.ab.get()
        out.put(now())

    def produce(self, n: int, size: int) -> None:
        if size > 4096:
            src = np.full(size, 7, dtype=np.uint8)
            for _ in range(n):
                self.ab.put(src)
        else:
            msg = bytes(size)
            for _ in range(n):
                self.ab.put(msg)


# ---------------------------------------------------------------- shared_memory + semaphores
class ShmSem(Transport):
    """A ring of slots in multiprocessing.shared_memory, counted by two semaphores."""

    name = "mp.shared_memory+sem"

    def setup(self, case: str, size: int) -> None:
        self.slots = 1024 if case == "stream" else (2 if case == "array" else 1)
        self.size = size + 8
        self.shm = shared_memory.SharedMemory(create=True, size=self.slots * self.size * 2)
        self.full_ab, self.free_ab = mp.Semaphore(0), mp.Semaphore(self.slots)
        self.full_ba = mp.Semaphore(0)

    def teardown(self) -> None:
        self.shm.close()
        self.shm.unlink()

    def echo(self, ready: Any) -> None:
        buf = self.shm.buf
        half = self.slots * self.size
        ready.set()
        while True:
            self.full_ab.acquire()
            n = int.from_bytes(buf[0:8], "little")
            buf[half:half + 8 + n] = buf[0:8 + n]  # reply = copy of the request
            stop = bytes(buf[8:8 + n]) == STOP
            self.full_ba.release()
            if stop:
                return

    def pingpong(self, n: int, size: int) -> List[int]:
        buf = self.shm.buf
        half = self.slots * self.size
        msg = bytes(size)
        out = []
        for _ in range(n + 1):
            m = STOP if len(out) == n else msg
            t0 = now()
            buf[0:8] = len(m).to_bytes(8, "little")
            buf[8:8 + len(m)] = m
            self.full_ab.release()
            self.full_ba.acquire()
            bytes(buf[half + 8:half + 8 + int.from_bytes(buf[half:half + 8], "little")])
            if m is not STOP:
                out.append(now() - t0)
        return out

    def consume(self, ready: Any, n: int, size: int, out: Any) -> None:
        buf = self.shm.buf
        ready.set()
        dst = np.empty(size, dtype=np.uint8)
        for i in range(n):
            self.full_ab.acquire()
            off = (i % self.slots) * self.size
            if size > 4096:
                _consume_array(np.frombuffer(buf, dtype=np.uint8, count=size, offset=off + 8), dst)
            else:
                bytes(buf[off + 8:off + 8 + size])
            self.free_ab.release()
        out.put(now())

    def produce(self, n: int, size: int) -> None:
        buf = self.shm.buf
        src = np.full(size, 7, dtype=np.uint8)
        msg = bytes(size)
        for i in range(n):
            self.free_ab.acquire()
            off = (i % self.slots) * self.size
            if size > 4096:
                np.copyto(np.frombuffer(buf, dtype=np.uint8, count=size, offset=off + 8), src)
            else:
                buf[off + 8:off + 8 + size] = msg
            self.full_ab.release()


# ---------------------------------------------------------------- copy limit (spin flags, no IPC library)
class CopyLimit(Transport):
    """The cross-core copy limit: the producer copies into a 2-slot shared
    buffer and the consumer copies out, handing slots over by spinning on a
    flag word - the copies every array row does, with nothing else."""

    name = "copy-limit"

    def setup(self, case: str, size: int) -> None:
        self.shm = shared_memory.SharedMemory(create=True, size=2 * size + 128)
        self.size = size

    def teardown(self) -> None:
        self.shm.close()
        self.shm.unlink()

    def _arrays(self) -> Tuple[np.ndarray, List[np.ndarray]]:
        flags = np.frombuffer(self.shm.buf, dtype=np.uint64, count=2)
        slots = [np.frombuffer(self.shm.buf, dtype=np.uint8, count=self.size, offset=128 + i * self.size) for i in range(2)]
        return flags, slots

    def consume(self, ready: Any, n: int, size: int, out: Any) -> None:
        flags, slots = self._arrays()
        dst = np.empty(size, dtype=np.uint8)
        ready.set()
        for i in range(n):
            s = i & 1
            while flags[s] == 0:
                os.sched_yield()
            _consume_array(slots[s], dst)
            flags[s] = 0
        del flags, slots
        out.put(now())

    def produce(self, n: int, size: int) -> None:
        flags, slots = self._arrays()
        src = np.full(size, 7, dtype=np.uint8)
        for i in range(n):
            s = i & 1
            while flags[s] != 0:
                os.sched_yield()
            np.copyto(slots[s], src)
            flags[s] = 1
        while flags[0] != 0 or flags[1] != 0:
            os.sched_yield()
        del flags, slots


# ---------------------------------------------------------------- pyzmq
class Zmq(Transport):
    name = "pyzmq"

    def setup(self, case: str, size: int) -> None:
        self.path = f"/tmp/zipc-bench-{os.getpid()}-{case}.sock"
        self.addr = "ipc://" + self.path

    def teardown(self) -> None:
        if os.path.exists(self.path):
            os.unlink(self.path)

    def _sock(self, bind: bool) -> Any:
        import zmq
        ctx = zmq.Context.instance()
        s = ctx.socket(zmq.PAIR)
        s.setsockopt(zmq.SNDHWM, 10000)
        s.setsockopt(zmq.RCVHWM, 10000)
        s.setsockopt(zmq.RCVTIMEO, 60000)  # a lost message fails the row instead of hanging
        (s.bind if bind else s.connect)(self.addr)
        return s

    def echo(self, ready: Any) -> None:
        import zmq
        s = self._sock(False)
        ready.set()
        while True:
            m = s.recv()
            s.send(m)
            if m == STOP:
                # The reply must leave before the process does: linger is
                # honoured by the context's term(), not by close(), and a
                # forked child exits without terminating the context.
                s.close(linger=5000)
                zmq.Context.instance().term()
                return

    def pingpong(self, n: int, size: int) -> List[int]:
        s = self._sock(True)
        msg = bytes(size)
        out = []
        for _ in range(n):
            t0 = now()
            s.send(msg)
            s.recv()
            out.append(now() - t0)
        s.send(STOP)
        s.recv()
        s.close(linger=0)
        return out

    def consume(self, ready: Any, n: int, size: int, out: Any) -> None:
        s = self._sock(False)
        ready.set()
        if size > 4096:
            dst = np.empty(size, dtype=np.uint8)
            for _ in range(n):
                _consume_array(np.frombuffer(s.recv(copy=False).buffer, dtype=np.uint8), dst)
        else:
            for _ in range(n):
                s.recv()
        out.put(now())

    def open_producer(self, size: int) -> None:
        # The consumer connected before this bind, so libzmq retries after its reconnect
        # interval (100 ms by default): bind and let it reconnect outside the timed window.
        self.producer = self._sock(True)
        time.sleep(0.25)

    def produce(self, n: int, size: int) -> None:
        import zmq
        s = self.producer
        if size > 4096:
            src = np.full(size, 7, dtype=np.uint8)
            for _ in range(n):
                s.send(src, copy=False)
        else:
            msg = bytes(size)
            for _ in range(n):
                s.send(msg)
        s.close(linger=-1)
        zmq.Context.instance().term()  # flushes what is still queued (close() alone does not)


# ---------------------------------------------------------------- iceoryx2 (polling: its Python pub/sub has no blocking receive)
class Iox2(Transport):
    name = "iceoryx2"

    def setup(self, case: str, size: int) -> None:
        self.svc = f"zipc-bench/{os.getpid()}/{case}"
        self.size = size
        # The same buffer depth as the zipc queue of the same case (Zipc.setup).
        self.depth = {"stream": 4096, "array": 2}.get(case, 64)
        self.producer: Any = None

    def _ports(self, leg: str, pub: bool) -> Any:
        import iceoryx2 as iox2
        node = iox2.NodeBuilder.new().create(iox2.ServiceType.Ipc)
        svc = (node.service_builder(iox2.ServiceName.new(self.svc + "/" + leg))
               .publish_subscribe(iox2.Slice[ctypes.c_uint8])
               .subscriber_max_buffer_size(self.depth).enable_safe_overflow(False)
               .open_or_create())
        if pub:
            port = (svc.publisher_builder().initial_max_slice_len(max(self.size, 8))
                    .backpressure_strategy(iox2.BackpressureStrategy.RetryUntilDelivered)
                    .max_loaned_samples(4).create())
        else:
            port = svc.subscriber_builder().buffer_size(self.depth).create()
        return node, svc, port

    @staticmethod
    def _send(pub: Any, data: bytes) -> None:
        s = pub.loan_slice_uninit(len(data))
        ctypes.memmove(s.payload().as_ptr(), data, len(data))
        s.assume_init().send()

    @staticmethod
    def _recv(sub: Any) -> Any:
        while True:
            s = sub.receive()
            if s is not None:
                return s

    def echo(self, ready: Any) -> None:
        k1 = self._ports("ab", False)
        k2 = self._ports("ba", True)
        ready.set()
        sub, pub = k1[2], k2[2]
        while True:
            s = self._recv(sub)
            m = s.payload().as_memory_view().tobytes()
            s.delete()
            self._send(pub, m)
            if m == STOP:
                time.sleep(0.05)
                return

    def pingpong(self, n: int, size: int) -> List[int]:
        k1 = self._ports("ab", True)
        k2 = self._ports("ba", False)
        pub, sub = k1[2], k2[2]
        time.sleep(0.1)
        pub.update_connections()
        msg = bytes(size)
        out = []
        for _ in range(n):
            t0 = now()
            self._send(pub, msg)
            s = self._recv(sub)
            s.payload().as_memory_view().tobytes()
            s.delete()
            out.append(now() - t0)
        self._send(pub, STOP)
        self._recv(sub).delete()
        return out

    def consume(self, ready: Any, n: int, size: int, out: Any) -> None:
        k = self._ports("ab", False)
        sub = k[2]
        ready.set()
        dst = np.empty(size, dtype=np.uint8)
        for _ in range(n):
            s = self._recv(sub)
            if size > 4096:
                _consume_array(np.frombuffer(s.payload().as_memory_view(), dtype=np.uint8), dst)
            else:
                s.payload().as_memory_view().tobytes()
            s.delete()
        out.put(now())

    def open_producer(self, size: int) -> None:
        self.producer = self._ports("ab", True)  # kept alive until teardown
        time.sleep(0.1)  # outside the timed window: let the subscriber's connection settle
        self.producer[2].update_connections()

    def teardown(self) -> None:
        self.producer = None

    def produce(self, n: int, size: int) -> None:
        pub = self.producer[2]
        src = np.full(size, 7, dtype=np.uint8)
        msg = bytes(size)
        for _ in range(n):
            s = pub.loan_slice_uninit(size)
            if size > 4096:
                np.copyto(np.frombuffer(s.payload().as_memory_view(), dtype=np.uint8), src)
            else:
                ctypes.memmove(s.payload().as_ptr(), msg, size)
            s.assume_init().send()
        time.sleep(0.05)

# ---------------------------------------------------------------- main sides in a forked child
# Zenoh and eCAL start runtime threads that a later fork does not carry: a
# peer forked after the bench process had opened a session would inherit a
# dead runtime. Their main sides therefore run in forked children too, and
# the bench process never starts either library.
_FORK = mp.get_context("fork")


def _in_fork(fn: Callable[[], Any], bound: float) -> Any:
    """fn() in a forked child; its result or error, or a TimeoutError after `bound` s."""
    rx, tx = _FORK.Pipe(duplex=False)

    def child() -> None:
        try:
            tx.send(("ok", fn()))
        except BaseException as e:  # the error is reported by the parent
            tx.send(("error", f"{type(e).__name__}: {e}"))

    p = _FORK.Process(target=child, daemon=True)
    p.start()
    try:
        if not rx.poll(bound):
            raise TimeoutError(f"main side gave no result within {bound:.0f} s")
        kind, value = rx.recv()
        if kind != "ok":
            raise RuntimeError(value)
        return value
    finally:
        p.join(5)
        if p.is_alive():
            p.kill()
            p.join()


class _ForkedProducer:
    """A producing side in a forked child: open(size) runs when this is made
    (outside the timed window); run(n) hands it n over a pipe (one message hop
    inside the timed window) and returns when produce(ports, n, size) has."""

    def __init__(self, open_: Callable[[int], Any], produce: Callable[[Any, int, int], None], size: int,
                 bound: float) -> None:
        self.bound = bound
        self.conn, theirs = _FORK.Pipe(duplex=True)

        def child() -> None:
            try:
                ports = open_(size)
                theirs.send("ready")
                if theirs.poll(bound):
                    produce(ports, theirs.recv(), size)
                    theirs.send("done")
            except BaseException as e:
                theirs.send(f"{type(e).__name__}: {e}")

        self.proc = _FORK.Process(target=child, daemon=True)
        self.proc.start()
        self._expect("ready")

    def _expect(self, what: str) -> None:
        if not self.conn.poll(self.bound):
            raise TimeoutError(f"producer not {what} within {self.bound:.0f} s")
        got = self.conn.recv()
        if got != what:
            raise RuntimeError(got)

    def run(self, n: int) -> None:
        self.conn.send(n)
        self._expect("done")

    def close(self) -> None:
        self.proc.join(5)
        if self.proc.is_alive():
            self.proc.kill()
            self.proc.join()


class _ForkedProducing:
    """The producing side of a transport whose library must not be started in
    the bench process: _open(size) and _produce(ports, n, size) run in a
    _ForkedProducer, bounded by the class's BOUND."""

    BOUND = 60.0
    producer: Any = None

    def _open(self, size: int) -> Any:
        raise NotImplementedError

    def _produce(self, ports: Any, n: int, size: int) -> None:
        raise NotImplementedError

    def open_producer(self, size: int) -> None:
        self.producer = _ForkedProducer(self._open, self._produce, size, self.BOUND)

    def teardown(self) -> None:
        if self.producer is not None:
            self.producer.close()
            self.producer = None

    def produce(self, n: int, size: int) -> None:
        self.producer.run(n)


# ---------------------------------------------------------------- Zenoh (eclipse-zenoh, peer mode, shared memory on)
def _free_port() -> int:
    import socket
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def _zenoh_segments() -> set:
    try:
        return {os.path.join("/dev/shm", f) for f in os.listdir("/dev/shm") if f.endswith(".zenoh")}
    except FileNotFoundError:
        return set()


def _mapped_paths() -> set:
    """Every file some live process has mapped (what /proc/<pid>/maps names)."""
    out = set()
    for pid in os.listdir("/proc"):
        if not pid.isdigit():
            continue
        try:
            with open(f"/proc/{pid}/maps") as f:
                for line in f:
                    parts = line.split(None, 5)
                    if len(parts) == 6:
                        out.add(parts[5].rstrip("\n").removesuffix(" (deleted)"))
        except OSError:  # gone meanwhile, or not ours to read
            continue
    return out


class _Watchdog:
    """Closes a Zenoh session if the timed loop outlives `seconds`: its blocking
    recv() has no timeout, and closing the session makes it raise."""

    def __init__(self, session: Any, seconds: float) -> None:
        import threading
        self.fired = False

        def fire() -> None:
            self.fired = True
            session.close()

        self.timer = threading.Timer(seconds, fire)
        self.timer.daemon = True
        self.timer.start()

    def cancel(self) -> None:
        self.timer.cancel()
        if self.fired:
            raise TimeoutError("zenoh: no reply within the watchdog's bound (a lost message)")


class Zenoh(_ForkedProducing, Transport):
    """Two Zenoh sessions in peer mode on loopback TCP (no router, multicast
    scouting off), shared-memory transport enabled. Small messages are put as
    bytes as zenoh-python's z_ping/z_pub_thr do; the 1 MiB arrays are written
    into buffers of a ShmProvider as z_pub_shm does. Publishers use
    CongestionControl.BLOCK (as z_ping) so a stream loses nothing."""

    name = "zenoh"
    BOUND = 60.0  # seconds: any wait longer than this is a failure

    def setup(self, case: str, size: int) -> None:
        self.key = f"zipc-bench/{os.getpid()}/{case}"
        self.endpoint = f"tcp/127.0.0.1:{_free_port()}"
        self.size = size
        self.producer: Any = None
        self.segments_before = _zenoh_segments()

    def teardown(self) -> None:
        # Zenoh leaves its shared-memory segments in /dev/shm when its
        # processes exit (the Rust API's cleanup_orphaned_shm_segments is not
        # in the Python binding): the ones this case made that no process
        # maps any more are removed.
        mapped = _mapped_paths()
        for path in _zenoh_segments() - self.segments_before - mapped:
            try:
                os.unlink(path)
            except FileNotFoundError:
                pass

    def _session(self, listen: bool) -> Any:
        import zenoh
        c = zenoh.Config()
        c.insert_json5("mode", '"peer"')
        c.insert_json5("scouting/multicast/enabled", "false")
        c.insert_json5("transport/shared_memory/enabled", "true")
        c.insert_json5("listen/endpoints" if listen else "connect/endpoints", f'["{self.endpoint}"]')
        return zenoh.open(c)

    def _publisher(self, session: Any, leg: str) -> Any:
        import zenoh
        pub = session.declare_publisher(self.key + "/" + leg, congestion_control=zenoh.CongestionControl.BLOCK)
        deadline = time.monotonic() + 10
        while not pub.matching_status:  # the subscriber's declaration has arrived
            if time.monotonic() > deadline:
                raise TimeoutError(f"zenoh: no subscriber matched {self.key}/{leg} within 10 s ({self.endpoint})")
            time.sleep(0.01)
        return pub

    def echo(self, ready: Any) -> None:
        s = self._session(True)
        sub = s.declare_subscriber(self.key + "/ab")
        ready.set()
        pub = self._publisher(s, "ba")
        while True:
            m = sub.recv().payload.to_bytes()
            pub.put(m)
            if m == STOP:
                time.sleep(0.05)
                s.close()
                return

    def pingpong(self, n: int, size: int) -> List[int]:
        return _in_fork(lambda: self._pingpong(n, size), self.BOUND + 30)

    def _pingpong(self, n: int, size: int) -> List[int]:
        s = self._session(False)
        try:
            sub = s.declare_subscriber(self.key + "/ba")
            pub = self._publisher(s, "ab")
            # Outside the timed window: one round trip proves both routes are up.
            deadline = time.monotonic() + 10
            while True:
                pub.put(b"W")
                t = time.monotonic() + 0.2
                while sub.try_recv() is None and time.monotonic() < t:
                    time.sleep(0.001)
                if time.monotonic() < t:
                    break
                if time.monotonic() > deadline:
                    raise TimeoutError(f"zenoh: no echo within 10 s ({self.endpoint})")
            time.sleep(0.2)
            while sub.try_recv() is not None:  # replies to repeated warm-up pings
                pass
            msg = bytes(size)
            out = []
            dog = _Watchdog(s, self.BOUND)
            try:
                for _ in range(n):
                    t0 = now()
                    pub.put(msg)
                    sub.recv().payload.to_bytes()
                    out.append(now() - t0)
                pub.put(STOP)
                sub.recv()
            finally:
                dog.cancel()
            return out
        finally:
            s.close()

    def consume(self, ready: Any, n: int, size: int, out: Any) -> None:
        s = self._session(True)
        sub = s.declare_subscriber(self.key + "/ab")
        ready.set()
        if size > 4096:
            dst = np.empty(size, dtype=np.uint8)
            for _ in range(n):
                # The binding offers no buffer view of a sample: to_bytes() is the
                # consumer's one copy, np.frombuffer a view of it.
                _consume_array(np.frombuffer(sub.recv().payload.to_bytes(), dtype=np.uint8), dst)
        else:
            for _ in range(n):
                sub.recv().payload.to_bytes()
        out.put(now())
        s.close()

    def _open(self, size: int) -> Any:
        import zenoh
        s = self._session(False)
        provider = zenoh.shm.ShmProvider.default_backend(4 * size) if size > 4096 else None
        return (s, self._publisher(s, "ab"), provider)

    def _produce(self, ports: Any, n: int, size: int) -> None:
        import zenoh
        session, pub, provider = ports
        if provider is not None:
            # ZShmMut takes bytes only (no buffer protocol): the source is made
            # bytes once, and each message is one copy into shared memory.
            src = np.full(size, 7, dtype=np.uint8).tobytes()
            policy = zenoh.shm.BlockOn(zenoh.shm.GarbageCollect())
            for _ in range(n):
                buf = provider.alloc(size, policy=policy)
                buf[:] = src
                pub.put(buf)
        else:
            msg = bytes(size)
            put = pub.put
            for _ in range(n):
                put(msg)
        session.close()  # flushes what is still queued


# ---------------------------------------------------------------- eCAL (eclipse-ecal, shared memory, zero-copy mode)
class Ecal(_ForkedProducing, Transport):
    """eCAL 6 publisher/subscriber over its shared-memory layer with
    zero_copy_mode on, one eCAL process per side. Each send waits for the
    subscriber's acknowledgement (acknowledge_timeout_ms), eCAL's lossless
    mode, so a stream loses nothing. Received samples arrive on eCAL's
    callback thread and are handed over through a queue.Queue, whose get()
    bounds every wait."""

    name = "ecal"
    BOUND = 60.0

    def setup(self, case: str, size: int) -> None:
        self.topic = f"zipc_bench_{os.getpid()}_{case}"
        self.producer: Any = None

    def _init(self) -> Any:
        import ecal.nanobind_core as ec
        if not ec.initialize(f"zipc-bench-{os.getpid()}"):
            raise RuntimeError("ecal: initialize() failed")
        return ec

    def _publisher(self, ec: Any, leg: str) -> Any:
        cfg = ec.get_publisher_configuration()
        cfg.layer.shm.zero_copy_mode = True
        cfg.layer.shm.acknowledge_timeout_ms = 5000
        pub = ec.Publisher(self.topic + "_" + leg, ec.DataTypeInformation(), cfg)
        deadline = time.monotonic() + 15
        while pub.get_subscriber_count() == 0:  # registration is periodic (about 1 s)
            if time.monotonic() > deadline:
                raise TimeoutError(f"ecal: no subscriber registered for {self.topic}_{leg} within 15 s")
            time.sleep(0.01)
        return pub

    def _subscriber(self, ec: Any, leg: str) -> Tuple[Any, Callable[[], Any]]:
        import queue
        q: Any = queue.Queue()
        sub = ec.Subscriber(self.topic + "_" + leg)
        sub.set_receive_callback(lambda _id, _type, data: q.put(bytes(data.buffer)))

        def get() -> Any:
            try:
                return q.get(timeout=self.BOUND)
            except queue.Empty:
                raise TimeoutError(f"ecal: nothing received on {self.topic}_{leg} within {self.BOUND:.0f} s") from None

        get.try_get = q.get_nowait  # type: ignore[attr-defined]
        return sub, get

    def echo(self, ready: Any) -> None:
        ec = self._init()
        _sub, get = self._subscriber(ec, "ab")
        ready.set()
        pub = self._publisher(ec, "ba")
        while True:
            m = get()
            pub.send(m)
            if m == STOP:
                time.sleep(0.05)
                ec.finalize()
                return

    def pingpong(self, n: int, size: int) -> List[int]:
        return _in_fork(lambda: self._pingpong(n, size), self.BOUND * 2 + 30)

    def _pingpong(self, n: int, size: int) -> List[int]:
        import queue
        ec = self._init()
        try:
            _sub, get = self._subscriber(ec, "ba")
            pub = self._publisher(ec, "ab")
            deadline = time.monotonic() + 15  # one untimed round trip: both routes are up
            while True:
                pub.send(b"W")
                t = time.monotonic() + 0.2
                got = False
                while not got and time.monotonic() < t:
                    try:
                        get.try_get()  # type: ignore[attr-defined]
                        got = True
                    except queue.Empty:
                        time.sleep(0.001)
                if got:
                    break
                if time.monotonic() > deadline:
                    raise TimeoutError("ecal: no echo within 15 s")
            time.sleep(0.2)
            try:
                while True:
                    get.try_get()  # type: ignore[attr-defined]
            except queue.Empty:
                pass
            msg = bytes(size)
            out = []
            for _ in range(n):
                t0 = now()
                pub.send(msg)
                get()
                out.append(now() - t0)
            pub.send(STOP)
            get()
            return out
        finally:
            ec.finalize()

    def consume(self, ready: Any, n: int, size: int, out: Any) -> None:
        ec = self._init()
        _sub, get = self._subscriber(ec, "ab")
        ready.set()
        if size > 4096:
            dst = np.empty(size, dtype=np.uint8)
            for _ in range(n):
                # bytes(data.buffer) in the callback is the consumer's one copy.
                _consume_array(np.frombuffer(get(), dtype=np.uint8), dst)
        else:
            for _ in range(n):
                get()
        out.put(now())
        ec.finalize()

    def _open(self, size: int) -> Any:
        ec = self._init()
        return ec, self._publisher(ec, "ab")

    def _produce(self, ports: Any, n: int, size: int) -> None:
        ec, pub = ports
        # send() takes bytes: the source is made bytes once, and each message is
        # one copy into eCAL's shared-memory file.
        msg = np.full(size, 7, dtype=np.uint8).tobytes() if size > 4096 else bytes(size)
        send = pub.send
        for _ in range(n):
            send(msg)
        ec.finalize()


def all_transports() -> Dict[str, Callable[[], Transport]]:
    return {
        "zipc-busy": lambda: Zipc("busy"),
        "zipc-adaptive": lambda: Zipc("adaptive"),
        "zipc-block": lambda: Zipc("block"),
        "zipc-adaptive-batch64": lambda: Zipc("adaptive", batch=64),
        "mp.Pipe": Pipe,
        "mp.Queue": MpQueue,
        "mp.shared_memory+sem": ShmSem,
        "pyzmq": Zmq,
        "iceoryx2": Iox2,
        "zenoh": Zenoh,
        "ecal": Ecal,
        "copy-limit": CopyLimit,
    }
