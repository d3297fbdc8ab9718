from __future__ import annotations

import multiprocessing as mp

import pytest

import zipc


def _notify_later(name: str, ids: list) -> None:
    ch = zipc.EventChannel.open(name)
    n = ch.notifier()
    for i in ids:
        n.notify(i)


def test_a_listener_learns_the_ids_another_process_notified(name: str) -> None:
    with zipc.EventChannel.create(name, max_event_id=127) as ch:
        listener = ch.listener()
        p = mp.get_context("fork").Process(target=_notify_later, args=(name, [5, 100, 5]))
        p.start()
        seen: set = set()
        while len(seen) < 2:
            got = listener.wait(timeout=5)
            assert got, "no notification within 5 s"
            seen.update(got)
        p.join(10)
        assert seen == {5, 100}
        # The second 5 is coalesced with the first or arrives on its own.
        assert set(listener.try_wait()) <= {5}
        assert listener.try_wait() == []
        with pytest.raises(zipc.TooLarge):
            ch.notifier().notify(128)


def test_a_listener_in_a_waitset_is_reported_and_taken(name: str) -> None:
    with zipc.EventChannel.create(name) as ch:
        listener = ch.listener()
        ws = zipc.WaitSet()
        lid = ws.attach(listener)
        assert ws.wait(0.01) == []
        assert ch.notifier().notify(9) == 1
        assert ws.wait(1) == [(lid, "listener")]
        assert listener.try_wait() == [9]
        ws.detach(lid)
