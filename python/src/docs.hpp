// Docstring lines the channels' create/open/remove functions share, so each
// argument is described the same way everywhere. String literals (macros) so
// they concatenate with each function's own text at compile time; nanobind
// keeps the pointer. scripts/check-pydoc.py checks every argument is named.
#pragma once

// NOLINTBEGIN(cppcoreguidelines-macro-usage): literals that must concatenate
#define ZIPC_PYDOC_NAME                                                                                      \
  "name: the segment's name, 1 to 200 letters, digits, '_', '-' or '.' (not first), optionally \"ns:name\" " \
  "with a name space; it lives at ``/dev/shm/zipc.<name>``.\n"
#define ZIPC_PYDOC_WAIT "wait: how this handle's blocking calls wait (WaitStrategy.busy, .adaptive or .block).\n"
#define ZIPC_PYDOC_MODE \
  "mode: permission bits of the file a create makes (0o600: the owner only; 0o660: its group too).\n"
#define ZIPC_PYDOC_PATH "path: a file to hold the segment instead of ``/dev/shm/zipc.<name>`` ('': /dev/shm).\n"
#define ZIPC_PYDOC_PREFAULT                                                                                   \
  "prefault: commit every page at create/open, so a full /dev/shm fails here (OutOfMemory) rather than with " \
  "SIGBUS on a later first touch.\n"
#define ZIPC_PYDOC_RECOVERY                                                                                    \
  "recovery_time: seconds (or datetime.timedelta) a survivor waits on a silent peer before it checks whether " \
  "that peer died and recovers what it held.\n"
#define ZIPC_PYDOC_TYPE                                                                                    \
  "type: a TypeIdentity (None: none); create records it, open checks it and raises TypeMismatch when the " \
  "channel holds another type or none.\n"
#define ZIPC_PYDOC_ACCEPT                                                                                  \
  "accept_existing: when the channel exists with other options, attach to it as it is instead of raising " \
  "OptionsMismatch.\n"
#define ZIPC_PYDOC_REMOVE_PATH "path: the file the segment was created at ('': ``/dev/shm/zipc.<name>``).\n"
// NOLINTEND(cppcoreguidelines-macro-usage)
