#include "state_file.hpp"

#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <filesystem>
#include <system_error>

#include "zipc/error.hpp"

namespace zipc::bridge_detail {
namespace {
constexpr std::uint64_t kMagic = 0x5A42525053544154ull;  // "ZBRPSTAT"
// FNV-1a over the first n numbers of r.
std::uint64_t check(const StateFile::Record& r, std::size_t n = std::tuple_size_v<StateFile::Record>) {
  std::uint64_t h = 1469598103934665603ull;
  for (std::size_t i = 0; i < n; ++i) h = (h ^ r[i]) * 1099511628211ull;
  return h;
}
// On disk: kMagic, the record, its check. The older form had four numbers.
constexpr std::size_t kWords = 2 + std::tuple_size_v<StateFile::Record>;
constexpr std::size_t kOldWords = kWords - 1;
}  // namespace

StateFile::~StateFile() {
  if (file_ != nullptr) std::fclose(file_);
}

void StateFile::open(const std::string& path) {
  path_ = path;
  std::error_code ec;
  std::filesystem::create_directories(std::filesystem::path(path).parent_path(), ec);
  file_ = std::fopen(path.c_str(), "r+b");
  if (file_ == nullptr) file_ = std::fopen(path.c_str(), "w+b");
  if (file_ == nullptr)
    throw Error(Errc::system, "bridge state file '" + path + "': " + std::system_category().message(errno));
  std::setvbuf(file_, nullptr, _IONBF, 0);  // one write() per record
}

std::optional<StateFile::Record> StateFile::read() {
  if (file_ == nullptr) return std::nullopt;
  std::array<std::uint64_t, kWords> raw{};
  const ssize_t got = ::pread(fileno(file_), raw.data(), sizeof(raw), 0);
  if (got < 0 || raw[0] != kMagic) return std::nullopt;
  Record r{raw[1], raw[2], raw[3], raw[4], raw[5]};
  if (static_cast<std::size_t>(got) == sizeof(raw) && raw[kWords - 1] == check(r)) return r;
  // The older form (a file written by an earlier bridge, or a newer file
  // that was never fully written: its check then fails).
  r[4] = 0;
  if (static_cast<std::size_t>(got) >= kOldWords * sizeof(std::uint64_t) && raw[kOldWords - 1] == check(r, 4)) return r;
  return std::nullopt;
}

void StateFile::write(const Record& r) {
  if (file_ == nullptr) return;
  const std::array<std::uint64_t, kWords> raw{kMagic, r[0], r[1], r[2], r[3], r[4], check(r)};
  // One system call at offset 0: the record lies within one page, which a
  // SIGKILL does not tear (a larger write may stop between pages).
  static_assert(sizeof(raw) <= 512);
  if (::pwrite(fileno(file_), raw.data(), sizeof(raw), 0) != static_cast<ssize_t>(sizeof(raw)))
    throw Error(Errc::system, "bridge state file '" + path_ + "': " + std::system_category().message(errno));
}

}  // namespace zipc::bridge_detail
