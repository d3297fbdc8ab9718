// Room for a new segment on its file system: checked at create, committed
// only when asked (docs/guide/segment.md, "Memory: reserved, touched, prefaulted").
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

namespace zipc::detail {

// "512 bytes", "12.3 KiB", "64.0 MiB": sizes in error messages.
std::string size_text(std::uint64_t bytes);

// The directory a segment file lives in, for messages: "/dev/shm", the
// directory of SegmentOptions::path, or "memfd".
std::string space_label(const std::string& path, bool memfd);

// Makes sure a new segment file (fd, already truncated to total bytes) fits:
// fails with Errc::out_of_memory naming both sizes when the file system has
// less free space than total. On a memory file system (tmpfs: /dev/shm,
// memfd) the pages are then left untouched unless commit is set (prefault);
// on a disk they are allocated now (blocks on disk, no memory). kind and name
// label the error ("topic 'x': ...").
void reserve_space(int fd, std::string_view kind, std::string_view name, const std::string& where, std::uint64_t total,
                   bool commit);

}  // namespace zipc::detail
