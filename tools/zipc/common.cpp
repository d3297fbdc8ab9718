// Shared pieces of the zipc tool (common.hpp).
#include "common.hpp"

#include <unistd.h>

#include <atomic>
#include <csignal>
#include <ctime>
#include <thread>

namespace zipc_tool {

void fail(int code, std::string_view object, std::string_view cause) {
  std::string what;
  if (!object.empty()) {
    what += "'";
    what += object;
    what += "': ";
  }
  what += cause;
  throw ToolError(code, what);
}

int exit_code_for(zipc::Errc e) noexcept {
  using zipc::Errc;
  switch (e) {
    case Errc::ok: return kOk;
    case Errc::not_found: return kNotFound;
    case Errc::permission_denied: return kPermission;
    case Errc::invalid_name:
    case Errc::invalid_argument:
    case Errc::too_large: return kUsage;
    case Errc::timeout:
    case Errc::init_timeout: return kTimeout;
    case Errc::version_mismatch:
    case Errc::truncated:
    case Errc::bad_magic:
    case Errc::corrupt_header:
    case Errc::corrupt:
    case Errc::creator_died: return kCorrupt;
    case Errc::already_exists:
    case Errc::busy:
    case Errc::wrong_kind:
    case Errc::not_retained: return kConflict;
    case Errc::closed:
    case Errc::peer_dead: return kClosed;
    default: return kFailure;
  }
}

int exit_code_for(zipc::Status s) noexcept {
  using zipc::Status;
  switch (s) {
    case Status::ok: return kOk;
    case Status::timeout: return kTimeout;
    case Status::closed:
    case Status::peer_dead: return kClosed;
    case Status::corrupt: return kCorrupt;
    case Status::too_large: return kUsage;
    case Status::busy:
    case Status::not_retained: return kConflict;
    case Status::remote_error: return kRemote;
    default: return kFailure;
  }
}

std::string human_size(std::uint64_t b) {
  const char* units[] = {"B", "KiB", "MiB", "GiB", "TiB"};
  double v = static_cast<double>(b);
  int u = 0;
  while (v >= 1024 && u < 4) {
    v /= 1024;
    ++u;
  }
  char buf[32];
  std::snprintf(buf, sizeof buf, u == 0 ? "%.0f %s" : "%.1f %s", v, units[u]);
  return buf;
}

std::string human_rate(double per_second) {
  double v = per_second;
  const char* units[] = {"", "k", "M", "G", "T"};
  int u = 0;
  while (v >= 1000 && u < 4) {
    v /= 1000;
    ++u;
  }
  char buf[32];
  std::snprintf(buf, sizeof buf, u == 0 ? "%.0f%s" : "%.2f%s", v, units[u]);
  return buf;
}

std::string when(std::uint64_t realtime_ns) {
  if (realtime_ns == 0) return "-";
  std::time_t t = static_cast<std::time_t>(realtime_ns / 1'000'000'000ull);
  std::tm tm{};
  ::localtime_r(&t, &tm);
  char buf[32];
  std::strftime(buf, sizeof buf, "%Y-%m-%d %H:%M:%S", &tm);
  return buf;
}

std::string octal_mode(std::uint32_t mode) {
  char buf[8];
  std::snprintf(buf, sizeof buf, "%04o", mode & 07777);
  return buf;
}

std::uint64_t now_realtime_ns() {
  return static_cast<std::uint64_t>(
      std::chrono::duration_cast<std::chrono::nanoseconds>(std::chrono::system_clock::now().time_since_epoch())
          .count());
}

std::uint64_t now_monotonic_ns() {
  return static_cast<std::uint64_t>(
      std::chrono::duration_cast<std::chrono::nanoseconds>(std::chrono::steady_clock::now().time_since_epoch())
          .count());
}

bool stderr_is_terminal() {
  return ::isatty(2) == 1;
}
bool stdout_is_terminal() {
  return ::isatty(1) == 1;
}

std::string hex(std::span<const std::byte> data) {
  static const char digits[] = "0123456789abcdef";
  std::string s(data.size() * 2, '0');
  for (std::size_t i = 0; i < data.size(); ++i) {
    const auto b = static_cast<unsigned>(data[i]);
    s[2 * i] = digits[b >> 4];
    s[2 * i + 1] = digits[b & 15];
  }
  return s;
}

bool is_utf8_text(std::span<const std::byte> data) {
  std::size_t i = 0;
  const std::size_t n = data.size();
  while (i < n) {
    const auto c = static_cast<unsigned char>(data[i]);
    if (c < 0x80) {
      if (c < 0x20 && c != '\t') return false;
      ++i;
      continue;
    }
    const int more = (c >> 5) == 6 ? 1 : (c >> 4) == 14 ? 2 : (c >> 3) == 30 ? 3 : -1;
    if (more < 0 || i + static_cast<std::size_t>(more) >= n) return false;
    for (int k = 1; k <= more; ++k) {
      if ((static_cast<unsigned char>(data[i + static_cast<std::size_t>(k)]) >> 6) != 2) return false;
    }
    i += static_cast<std::size_t>(more) + 1;
  }
  return true;
}

OutBuffer::OutBuffer(std::FILE* f, std::size_t capacity) : file_(f), buf_(capacity) {}

OutBuffer::~OutBuffer() {
  try {
    flush();
  } catch (...) {
  }
}

void OutBuffer::append(const void* data, std::size_t n) {
  const char* p = static_cast<const char*>(data);
  while (n != 0) {
    if (used_ == buf_.size()) flush();
    const std::size_t take = std::min(n, buf_.size() - used_);
    std::memcpy(buf_.data() + used_, p, take);
    used_ += take;
    p += take;
    n -= take;
  }
}

void OutBuffer::flush() {
  if (used_ == 0) return;
  const std::size_t wrote = std::fwrite(buf_.data(), 1, used_, file_);
  used_ = 0;
  if (wrote != buf_.size() && std::fflush(file_) != 0) fail(kIo, "stdout", std::strerror(errno));
  if (std::ferror(file_)) fail(kIo, "output", std::strerror(errno));
}

Progress::Progress(std::string what, std::uint64_t total)
    : what_(std::move(what)), total_(total), active_(stderr_is_terminal()) {}

Progress::~Progress() {
  finish();
}

void Progress::update(std::uint64_t done) {
  if (!active_) return;
  const std::uint64_t now = now_monotonic_ns();
  if (now - last_ns_ < 200'000'000ull) return;
  last_ns_ = now;
  const double pct = total_ == 0 ? 100.0 : 100.0 * static_cast<double>(done) / static_cast<double>(total_);
  std::fprintf(stderr, "\r%s: %5.1f%% (%llu/%llu)", what_.c_str(), pct, static_cast<unsigned long long>(done),
               static_cast<unsigned long long>(total_));
  std::fflush(stderr);
  shown_ = true;
}

void Progress::finish() {
  if (shown_) std::fprintf(stderr, "\r\033[K");
  shown_ = false;
}

namespace {
std::atomic<bool> g_stop{false};
extern "C" void on_stop_signal(int) {
  g_stop.store(true, std::memory_order_relaxed);  // relaxed: polled flag
}
}  // namespace

bool stop_requested() noexcept {
  return g_stop.load(std::memory_order_relaxed);  // relaxed: polled flag
}

bool pause_until(std::uint64_t due_ns) noexcept {
  for (;;) {
    if (stop_requested()) return false;
    const std::uint64_t now = now_monotonic_ns();
    if (now >= due_ns) return true;
    const std::uint64_t left = due_ns - now;
    if (left > 50'000) {
      std::this_thread::sleep_for(std::chrono::nanoseconds(std::min<std::uint64_t>(left - 20'000, 20'000'000)));
    }  // else spin: a sleep overshoots by ~50 us
  }
}

void install_stop_handler() {
  struct sigaction sa {};
  sa.sa_handler = on_stop_signal;
  sigemptyset(&sa.sa_mask);
  sigaction(SIGINT, &sa, nullptr);
  sigaction(SIGTERM, &sa, nullptr);
  std::signal(SIGPIPE, SIG_IGN);
}

zipc::SegmentKind kind_of(const std::string& name) {
  try {
    zipc::SegmentInfo info = zipc::Segment::inspect(name);
    if (!info.valid) {
      // Let the library decide: it refuses a bad segment (its error and its
      // ZIPC_LOG report) and waits out one still being initialized.
      const zipc::Segment seg = zipc::Segment::open(name, zipc::SegmentKind::any);
      return seg.kind();
    }
    return info.kind;
  } catch (const zipc::Error& e) {
    if (e.errc() == zipc::Errc::not_found) return zipc::SegmentKind::any;
    throw;
  }
}

nlohmann::ordered_json report_json(const zipc::ChannelReport& r) {
  nlohmann::ordered_json j;
  const zipc::SegmentInfo& s = r.segment;
  j["name"] = s.name;
  j["path"] = s.path;
  j["kind"] = s.valid || s.kind != zipc::SegmentKind::any ? zipc::to_string(s.kind) : "unknown";
  j["size"] = s.size;
  j["mode"] = octal_mode(r.mode);
  j["owner_uid"] = r.owner_uid;
  j["creator"] = {{"pid", s.creator.pid}, {"start_time", s.creator.start_time}, {"alive", s.creator_alive}};
  j["created_ns"] = s.created_ns;
  if (s.type) {  // a typed channel's message type (docs/guide/typed.md)
    j["type"] = {{"name", s.type->name},       {"size", s.type->size},
                 {"align", s.type->align},     {"fingerprint", s.type->fingerprint},
                 {"version", s.type->version}, {"field_count", s.type->field_count}};
  } else {
    j["type"] = nullptr;
  }
  j["valid"] = s.valid;
  j["readable"] = r.readable;
  j["problem"] = r.problem;
  j["state"] = r.state;
  auto obj = [](const zipc::ReportFields& f) {
    nlohmann::ordered_json o = nlohmann::ordered_json::object();
    for (const auto& [k, v] : f) o[k] = v;
    return o;
  };
  j["geometry"] = obj(r.geometry);
  j["positions"] = obj(r.positions);
  j["counters"] = obj(r.counters);
  nlohmann::ordered_json parts = nlohmann::ordered_json::array();
  for (const auto& p : r.participants) {
    nlohmann::ordered_json o;
    o["role"] = p.role;
    if (!p.mode.empty()) o["mode"] = p.mode;
    o["pid"] = p.process.pid;
    o["alive"] = p.alive;
    o["slot"] = p.slot;
    for (const auto& [k, v] : p.fields) o[k] = v;
    parts.push_back(std::move(o));
  }
  j["participants"] = std::move(parts);
  return j;
}

}  // namespace zipc_tool
