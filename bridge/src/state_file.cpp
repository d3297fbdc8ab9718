#include "state_file.hpp"

#include <cerrno>
#include <cstring>
#include <filesystem>
#include <system_error>

#include "zipc/error.hpp"

namespace zipc::bridge_detail {
namespace {
constexpr std::uint64_t kMagic = 0x5A42525053544154ull;  // "ZBRPSTAT"
std::uint64_t check(const StateFile::Record& r) {
  std::uint64_t h = 1469598103934665603ull;
  for (auto v : r) h = (h ^ v) * 1099511628211ull;
  return h;
}
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
  std::array<std::uint64_t, 6> raw{};
  std::rewind(file_);
  if (std::fread(raw.data(), sizeof(raw), 1, file_) != 1) return std::nullopt;
  Record r{raw[1], raw[2], raw[3], raw[4]};
  if (raw[0] != kMagic || raw[5] != check(r)) return std::nullopt;
  return r;
}

void StateFile::write(const Record& r) {
  std::array<std::uint64_t, 6> raw{kMagic, r[0], r[1], r[2], r[3], check(r)};
  std::rewind(file_);
  if (std::fwrite(raw.data(), sizeof(raw), 1, file_) != 1)
    throw Error(Errc::system, "bridge state file '" + path_ + "': " + std::system_category().message(errno));
}

}  // namespace zipc::bridge_detail
