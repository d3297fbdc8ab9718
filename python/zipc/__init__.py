"""zipc: zero-copy shared-memory IPC for Linux (Python bindings).

Channels: :class:`Queue` (many-producer many-consumer FIFO of blocks),
:class:`Topic` (publish/subscribe log: :class:`Publisher`, :class:`Subscriber`),
:class:`RpcServer` / :class:`RpcClient` (request/response), :class:`Heap`
(shared allocator) and :func:`segments` (what lives in /dev/shm).

Timeouts are seconds (``int``/``float``) or :class:`datetime.timedelta`:
``None`` waits forever, ``0`` tries once, a negative or NaN timeout raises
:class:`ValueError`. A blocking call that runs out of time raises
:class:`Timeout` (a :class:`TimeoutError`); the non-blocking ``try_*`` calls
return ``None`` (or ``False``) instead. Every blocking wait releases the GIL
and wakes at least every 20 ms to run signal handlers (Ctrl-C raises
:class:`KeyboardInterrupt`) and to notice a ``detach()``/``close()`` of its
handle from another thread or a signal handler (it then raises :class:`Closed`).

Failures raise :class:`Error` or one of its subclasses (one per error kind of
the C++ library: :class:`NotFound`, :class:`AlreadyExists`, :class:`Timeout`,
:class:`Closed`, ...), carrying the C++ message.

Zero copy: ``with q.reserve(size, timeout=1) as buf:`` gives a writable
memoryview of a block, committed when the block ends (aborted on an
exception); ``with q.acquire(timeout=1) as view:`` gives a read-only
memoryview, released at the end. Views are released when their loan ends,
so touching one afterwards raises ValueError; an export that outlives the
loan (a numpy array still made from it) keeps a read loan held until it goes
away, and makes a write loan's commit fail with BufferError (never a read of
memory that was given back).
"""

from __future__ import annotations

import atexit
from typing import Any, Dict, NamedTuple, Optional, Type

from . import _zipc
from ._zipc import Delivery as Delivery
from ._zipc import EventChannel as EventChannel
from ._zipc import Heap as Heap
from ._zipc import Listener as Listener
from ._zipc import LoanBuffer as LoanBuffer
from ._zipc import Multiplicity as Multiplicity
from ._zipc import Notifier as Notifier
from ._zipc import Publisher as Publisher
from ._zipc import Queue as Queue
from ._zipc import QueueReadLoan as QueueReadLoan
from ._zipc import QueueWriteLoan as QueueWriteLoan
from ._zipc import Role as Role
from ._zipc import RpcClient as RpcClient
from ._zipc import RpcServer as RpcServer
from ._zipc import RpcTicket as RpcTicket
from ._zipc import SegmentInfo as SegmentInfo
from ._zipc import Subscriber as Subscriber
from ._zipc import Topic as Topic
from ._zipc import TopicReadLoan as TopicReadLoan
from ._zipc import TopicWriteLoan as TopicWriteLoan
from ._zipc import WaitSet as WaitSet
from ._zipc import WaitStrategy as WaitStrategy
from ._zipc import remove_segment as remove_segment
from ._zipc import segments as segments

__version__ = "0.1.0"


class TypeIdentity(NamedTuple):
    """The message type a queue or topic records (C++: zipc::TypeIdentity).

    Pass one as ``type=`` to ``Queue.create``/``open``/``open_or_create`` (and
    the Topic ones): create records it, open checks it and raises
    :class:`TypeMismatch` naming both types when the channel holds another
    (or none). ``q.type_identity`` reads what a channel holds (``None``: created
    without a type). Build one with :meth:`of` or :meth:`from_dtype`, which
    compute the fingerprint as C++ ``zipc::type_identity_of<T>()`` does: a C++
    ``TypedQueue<T>`` whose ``zipc::type_name<T>`` says the same name, with the
    same size, alignment, field count and version, then matches.

    Fields: ``name`` (at most 192 bytes are stored), ``size`` (bytes of one
    message), ``align`` (its alignment), ``fingerprint`` (FNV-1a over the
    others, as C++ computes it), ``version`` (the layout version; 0 unless
    given), ``field_count`` (members of an aggregate; 0: not counted).
    """

    name: str
    size: int
    align: int
    fingerprint: int
    version: int = 0
    field_count: int = 0

    @classmethod
    def of(cls, name: str, size: int, align: int, *, field_count: int = 0, version: int = 0) -> "TypeIdentity":
        """The identity of a type called ``name`` of ``size`` bytes aligned to
        ``align``, with ``field_count`` members and layout ``version``: the
        fingerprint is computed as C++ ``zipc::type_fingerprint`` does."""
        fp = _zipc._type_fingerprint(name, size, align, field_count, version)
        return cls(name=name, size=size, align=align, fingerprint=fp, version=version, field_count=field_count)

    @classmethod
    def from_dtype(cls, dtype: Any, name: Optional[str] = None, *, version: int = 0) -> "TypeIdentity":
        """A numpy dtype's identity: its itemsize and alignment, its field count
        (0 for a plain dtype) and ``name`` (default: the dtype's ``str``, e.g.
        ``"<f8"``; give the C++ type's name to share a channel with it), and
        ``version`` (the layout version, as C++ ``type_name<T>::version``)."""
        fields = len(dtype.names) if getattr(dtype, "names", None) else 0
        return cls.of(name if name is not None else dtype.str, int(dtype.itemsize), int(dtype.alignment),
                      field_count=fields, version=version)


class Error(Exception):
    """Base of every zipc failure; ``kind`` names the C++ error kind."""

    kind: str = "error"


class NotFound(Error):
    """No segment (or named block) of that name."""

    kind = "not_found"


class AlreadyExists(Error):
    """A create found the name taken."""

    kind = "already_exists"


class PermissionDenied(Error, PermissionError):
    """The file's mode or owner forbids this process access."""

    kind = "permission_denied"


class WrongKind(Error):
    """The segment holds another kind (a queue opened as a topic, ...)."""

    kind = "wrong_kind"


class VersionMismatch(Error):
    """The segment's layout version differs from this library's."""

    kind = "version_mismatch"


class Corrupt(Error):
    """Shared state or a segment header failed validation."""

    kind = "corrupt"


class Truncated(Corrupt):
    """The segment's file is shorter than its header says."""

    kind = "truncated"


class BadMagic(Corrupt):
    """The file is not a zipc segment."""

    kind = "bad_magic"


class CorruptHeader(Corrupt):
    """A segment header field is out of range, or its checksum fails."""

    kind = "corrupt_header"


class InitTimeout(Error):
    """The segment's creator was still initializing it when the open timed out."""

    kind = "init_timeout"


class CreatorDied(Error):
    """The segment's creator died before finishing its initialization."""

    kind = "creator_died"


class InvalidArgument(Error, ValueError):
    """An argument or option out of range, or a call the handle's state does not allow."""

    kind = "invalid_argument"


class InvalidName(InvalidArgument):
    """A name that is empty, too long, or has characters other than letters, digits, '_',
    '-', '.'."""

    kind = "invalid_name"


class TooLarge(Error, ValueError):
    """A message over the channel's maximum (nothing was sent), or a buffer too small."""

    kind = "too_large"


class PeerDead(Error):
    """The other side (an Rpc server, ...) died."""

    kind = "peer_dead"


class NotRetained(Error):
    """A topic start sequence older than the log still holds, or a durable subscriber's
    released position."""

    kind = "not_retained"


class AddressUnavailable(Error):
    """A fixed-address heap could not be mapped at its address in this process."""

    kind = "address_unavailable"


class OutOfMemory(Error, MemoryError):
    """A heap (or /dev/shm) has no room."""

    kind = "out_of_memory"


class Busy(Error):
    """Every participant slot is in use, or a single-mode channel already has its one
    producer, consumer or publisher."""

    kind = "busy"


class Closed(Error):
    """The channel was closed, or this handle detached (also by another thread
    or a signal handler while a call waited on it)."""

    kind = "closed"


class Timeout(Error, TimeoutError):
    """A blocking call ran out of time (sync and ``zipc.aio`` alike)."""

    kind = "timeout"


class SystemFailure(Error, OSError):
    """An unexpected operating-system error (the message carries errno's text)."""

    kind = "system"


class OptionsMismatch(Error):
    """open_or_create found the channel made with other options (the message names both
    values)."""

    kind = "options_mismatch"


class TypeMismatch(Error):
    """The channel holds another message type, or none (the message names both)."""

    kind = "type_mismatch"


class WrongRole(Error):
    """The handle's role does not allow the call (send on a consumer-only queue, publish on
    a read-only topic, ...)."""

    kind = "wrong_role"


class Full(Error):
    """A non-blocking write found no room (raised only where None/False cannot say it)."""

    kind = "full"


class Empty(Error):
    """Kept for the error kind's name; non-blocking reads return ``None`` and
    blocking ones raise :class:`Timeout`."""

    kind = "empty"


class Overrun(Error):
    """A lossy subscriber was lapped by the publishers (what it missed is counted in lost)."""

    kind = "overrun"


class NotSupported(Error):
    """The mode does not offer the call (acquire on a lossy subscriber, ...)."""

    kind = "not_supported"


class RemoteError(Error):
    """An Rpc handler failed. At the caller: ``code`` (1: the handler raised, 2: it returned
    something that is not bytes-like), ``remote_type`` (the exception's type name, "" when none)
    and ``remote_message``. Raised in a handler, it answers with its own ``code``, ``remote_type``
    and message (and is not reported at the server as an unexpected exception)."""

    kind = "remote_error"

    def __init__(self, message: str = "", code: int = 1, remote_type: str = "",
                 remote_message: Optional[str] = None) -> None:
        """An error to raise in a handler: ``message`` (also the default
        ``remote_message``, what the caller sees), ``code`` (default 1) and
        ``remote_type`` (a type name for the caller; "" for none)."""
        super().__init__(message)
        self.code = code
        self.remote_type = remote_type
        self.remote_message = message if remote_message is None else remote_message


class LoanEnded(Error, ValueError):
    """The loan behind a view was committed, aborted or released."""

    kind = "loan_ended"


_ERRORS: Dict[str, Type[Error]] = {
    cls.kind: cls
    for cls in (
        Error, NotFound, AlreadyExists, PermissionDenied, WrongKind, VersionMismatch, Corrupt,
        Truncated, BadMagic, CorruptHeader, InitTimeout, CreatorDied, InvalidArgument, InvalidName,
        TooLarge, PeerDead, NotRetained, AddressUnavailable, OutOfMemory, Busy, Closed, Timeout,
        SystemFailure, OptionsMismatch, TypeMismatch, WrongRole, Full, Empty, Overrun, NotSupported,
        LoanEnded, RemoteError,
    )
}
_zipc._register_errors(_ERRORS)
# atexit runs handlers last-registered first: serving threads stop, then
# threads still blocked in zipc waits park for good instead of taking the GIL
# back while the interpreter finalizes (which would abort the process).
atexit.register(_zipc._exit_hook)
atexit.register(_zipc._stop_all_servers)  # serving threads must not outlive the interpreter

__all__ = [
    "Queue", "QueueWriteLoan", "QueueReadLoan", "Topic", "Publisher", "Subscriber",
    "TopicWriteLoan", "TopicReadLoan", "RpcServer", "RpcClient", "RpcTicket", "Heap",
    "SegmentInfo", "segments", "remove_segment", "Multiplicity", "Role", "WaitStrategy",
    "Delivery", "LoanBuffer", "WaitSet", "EventChannel", "Listener", "Notifier", "TypeIdentity",
] + [cls.__name__ for cls in _ERRORS.values()]
