// Making the liveness file (/dev/shm/.zipc-liveness, docs/design/overview.md "Process
// identity and liveness") exist. ProcessId::current() only opens an existing
// file: a process whose /dev/shm is private (a sandbox with an empty tmpfs,
// sharing channels by descriptor passing only) must not make a file of its
// own, whose tokens nobody else could see. Creating or opening a named
// segment in /dev/shm proves the directory is shared with the peers, so those
// paths create the file first.
#pragma once

namespace zipc::detail {

// Creates the liveness file when missing (mode 0644); errors are ignored (the
// process then uses the /proc fallback identity).
void prepare_liveness_file() noexcept;

}  // namespace zipc::detail
