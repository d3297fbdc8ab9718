from __future__ import annotations

import numpy as np
import pytest

import zipc


def test_every_subscriber_sees_every_message_in_order(name: str) -> None:
    with zipc.Topic.create(name, capacity_bytes=1 << 16, max_message_size=1024) as t:
        a = t.subscribe(start="oldest")
        b = t.subscribe(start="oldest", delivery=zipc.Delivery.lossy)
        pub = t.publisher()
        seqs = [pub.publish(b"m%d" % i, timeout=1) for i in range(5)]
        assert seqs == [0, 1, 2, 3, 4]
        assert [a.recv(timeout=1) for _ in range(5)] == [b"m%d" % i for i in range(5)]
        data, seq, ns = b.recv_info(timeout=1)
        assert (data, seq) == (b"m0", 0) and ns > 0
        assert a.try_recv() is None


def test_a_late_subscriber_replays_from_a_sequence(name: str) -> None:
    with zipc.Topic.create(name) as t:
        pub = t.publisher()
        for i in range(4):
            pub.publish(bytes([i]))
        s = t.subscribe(start=2)
        assert s.recv(timeout=1) == b"\x02"
        with pytest.raises(zipc.InvalidArgument):
            t.subscribe(start="newest")


def test_loans_publish_and_read_numpy_arrays_in_place(name: str) -> None:
    with zipc.Topic.create(name, capacity_bytes=1 << 20, max_message_size=1 << 16) as t:
        sub = t.subscribe(start="oldest")
        pub = t.publisher()
        src = np.linspace(0, 1, 1000, dtype=np.float32)
        loan = pub.reserve(src.nbytes, timeout=1)
        with loan as buf:
            np.frombuffer(buf, dtype=np.float32)[:] = src
        assert loan.sequence == 0
        rl = sub.acquire(timeout=1)
        with rl as view:
            assert np.array_equal(np.frombuffer(view, dtype=np.float32), src)
        assert rl.sequence == 0
        with pytest.raises(ValueError):
            view[0]


def test_a_subscriber_refuses_to_read_while_its_read_loan_is_held(name: str) -> None:
    with zipc.Topic.create(name) as t:
        sub = t.subscribe(start="oldest")
        pub = t.publisher()
        pub.publish(b"a")
        pub.publish(b"b")
        loan = sub.acquire(timeout=1)
        with pytest.raises(zipc.InvalidArgument):
            sub.recv(timeout=1)
        loan.release()
        assert sub.recv(timeout=1) == b"b"


def test_a_lossy_subscriber_counts_what_it_lost(name: str) -> None:
    with zipc.Topic.create(name, capacity_bytes=4096, max_message_size=256) as t:
        lossy = t.subscribe(start="oldest", delivery=zipc.Delivery.lossy)
        pub = t.publisher()
        for i in range(200):
            assert pub.try_publish(bytes(100)) is not None
        got = 0
        while lossy.try_recv() is not None:
            got += 1
        assert lossy.lost > 0 and got + lossy.lost == 200
        with pytest.raises(zipc.NotSupported):
            lossy.acquire(timeout=0)


def test_a_reliable_subscriber_holds_the_publisher_back(name: str) -> None:
    with zipc.Topic.create(name, capacity_bytes=4096, max_message_size=256) as t:
        sub = t.subscribe(start="oldest")
        pub = t.publisher()
        n = 0
        while n < 1000 and pub.try_publish(bytes(100)) is not None:
            n += 1
        assert 0 < n < 200
        with pytest.raises(zipc.Timeout):
            pub.publish(bytes(100), timeout=0.01)
        assert sub.recv(timeout=1) == bytes(100)
        assert pub.publish(bytes(100), timeout=1) == n


def test_a_single_publisher_topic_refuses_a_second_publisher(name: str) -> None:
    with zipc.Topic.create(name, publishers=zipc.Multiplicity.single) as t:
        p = t.publisher()
        with pytest.raises(zipc.Busy):
            t.publisher()
        p.detach()


def test_close_fails_publishes_and_subscribers_drain_then_see_closed(name: str) -> None:
    with zipc.Topic.create(name) as t:
        sub = t.subscribe(start="oldest")
        pub = t.publisher()
        pub.publish(b"kept", timeout=1)
        assert not t.closed
        t.close()
        assert t.closed
        with pytest.raises(zipc.Closed):
            pub.publish(b"late", timeout=1)
        assert sub.recv(timeout=1) == b"kept"
        with pytest.raises(zipc.Closed):
            sub.recv(timeout=1)


def test_a_durable_subscriber_resumes_and_its_name_is_exclusive(name: str) -> None:
    with zipc.Topic.create(name) as t:
        pub = t.publisher()
        sub = t.subscribe(start="oldest", durable_name="py-reader", durable_grace=60)
        for i in range(3):
            pub.publish(bytes([i]), timeout=1)
        assert sub.recv(timeout=1) == b"\x00"
        with pytest.raises(zipc.Busy):
            t.subscribe(durable_name="py-reader")
        with pytest.raises(zipc.InvalidArgument):
            t.subscribe(durable_name="no spaces")
        sub.detach()
        again = t.subscribe(durable_name="py-reader", durable_grace=60)
        assert again.recv(timeout=1) == b"\x01"
        assert again.lost == 0


def test_a_read_only_topic_serves_lossy_subscribers_and_refuses_writers(name: str) -> None:
    with zipc.Topic.create(name) as t:
        pub = t.publisher()
        with zipc.Topic.open(name, read_only=True) as ro:
            sub = ro.subscribe(start="oldest", delivery=zipc.Delivery.lossy)
            for i in range(3):
                pub.publish(b"r%d" % i, timeout=1)
            assert [sub.recv(timeout=1) for _ in range(3)] == [b"r0", b"r1", b"r2"]
            with pytest.raises(zipc.WrongRole, match="read-only"):
                ro.publisher()
            # Reliable too: its position lives in a seat file of its own.
            rel = ro.subscribe(start="latest")
            for i in range(3, 6):
                pub.publish(b"r%d" % i, timeout=1)
            assert [rel.recv(timeout=1) for _ in range(3)] == [b"r3", b"r4", b"r5"]
            rel.detach()
            with pytest.raises(zipc.WrongRole, match="read-only"):
                ro.subscribe(start="oldest", durable_name="keeper")  # a durable one writes the topic
            with pytest.raises(zipc.WrongRole, match="read-only"):
                ro.close()
        assert not t.closed
