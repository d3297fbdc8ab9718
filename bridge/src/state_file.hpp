// A small position file: one fixed-size record rewritten in place with one
// write (a SIGKILL cannot tear it; a power loss is not covered: no fsync).
#pragma once

#include <array>
#include <cstdint>
#include <cstdio>
#include <optional>
#include <string>

namespace zipc::bridge_detail {

class StateFile {
 public:
  // Five numbers; their meaning is the writer's. A file written before the
  // fifth was added reads with it 0.
  using Record = std::array<std::uint64_t, 5>;
  StateFile() = default;
  ~StateFile();
  StateFile(const StateFile&) = delete;
  StateFile& operator=(const StateFile&) = delete;

  // Opens or creates path; throws zipc::Error naming it on failure.
  void open(const std::string& path);
  // The stored record, if any (a torn or foreign file reads as none).
  [[nodiscard]] std::optional<Record> read();
  // One pwrite() at offset 0 (nothing when the file is not open).
  void write(const Record& r);
  [[nodiscard]] bool is_open() const noexcept { return file_ != nullptr; }

 private:
  std::FILE* file_ = nullptr;
  std::string path_;
};

}  // namespace zipc::bridge_detail
