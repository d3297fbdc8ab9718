#include "extras.hpp"

#include <signal.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <map>

#include "repetitions.hpp"
#include "results.hpp"

namespace zipc::bench {

namespace fs = std::filesystem;
using nlohmann::json;

std::vector<ExtraProgram> find_extras(const std::string& dir) {
  std::vector<ExtraProgram> out;
  std::error_code ec;
  for (const auto& e : fs::directory_iterator(dir, ec)) {
    const std::string n = e.path().filename().string();
    if (n.rfind("zipc-bench-", 0) != 0 || !e.is_regular_file(ec)) continue;
    if (::access(e.path().c_str(), X_OK) != 0) continue;
    out.push_back({n.substr(11), e.path().string()});
  }
  std::sort(out.begin(), out.end(), [](const auto& a, const auto& b) { return a.name < b.name; });
  return out;
}

const std::vector<std::pair<std::string, std::string>>& expected_peer_programs() {
  static const std::vector<std::pair<std::string, std::string>> v = {
      {"iceoryx2", "iceoryx2 (crates.io) built with cargo by scripts/run-bench.sh"},
      {"zenoh", "Zenoh with shared memory (crates.io) built with cargo by scripts/run-bench.sh"},
      {"aeron", "Aeron IPC (Maven io.aeron:aeron-all) built with Maven and javac by scripts/run-bench.sh"},
      {"chronicle",
       "Chronicle Queue (Maven net.openhft:chronicle-queue) built with Maven and javac by scripts/run-bench.sh"},
      {"grpc", "gRPC over a Unix socket (Debian libgrpc++-dev, protobuf-compiler-grpc)"},
      {"zmq-reqrep", "ZeroMQ REQ/REP over ipc:// (Debian libzmq3-dev)"},
  };
  return v;
}

std::string self_dir() {
  std::error_code ec;
  const fs::path p = fs::read_symlink("/proc/self/exe", ec);
  return ec ? std::string(".") : p.parent_path().string();
}

namespace {

double now_s() {
  timespec ts;
  ::clock_gettime(CLOCK_MONOTONIC, &ts);
  return static_cast<double>(ts.tv_sec) + static_cast<double>(ts.tv_nsec) / 1e9;
}

}  // namespace

std::string extra_row_id(const json& r) {
  return r.value("workload", "") + "/" + r.value("transport", "") + "/" + std::to_string(r.value("size", 0)) + "/" +
         r.value("wait", "");
}

ExtraOutcome run_extra(const ExtraProgram& p, bool full, double timeout_s, const std::string& tmp_dir) {
  ExtraOutcome out;
  const std::string file = tmp_dir + "/zipc-bench-" + p.name + "." + std::to_string(::getpid()) + ".json";
  std::error_code ec;
  fs::remove(file, ec);
  const double t0 = now_s();
  std::fflush(nullptr);
  const pid_t pid = ::fork();
  if (pid < 0) {
    out.error = "fork failed";
    return out;
  }
  if (pid == 0) {
    ::setpgid(0, 0);  // its own group, so a timeout ends its children too
    std::vector<std::string> args = {p.path};
    if (full) args.push_back("--full");
    args.push_back("--out");
    args.push_back(file);
    std::vector<char*> argv;
    argv.reserve(args.size() + 1);
    for (auto& a : args) argv.push_back(a.data());
    argv.push_back(nullptr);
    ::execv(p.path.c_str(), argv.data());
    ::_exit(127);
  }
  ::setpgid(pid, pid);
  int status = 0;
  bool done = false;
  while (!done) {
    const pid_t r = ::waitpid(pid, &status, WNOHANG);
    if (r == pid) {
      done = true;
      break;
    }
    if (now_s() - t0 > timeout_s) {
      ::kill(-pid, SIGKILL);
      ::kill(pid, SIGKILL);
      ::waitpid(pid, &status, 0);
      out.error = "timed out after " + std::to_string(static_cast<int>(timeout_s)) + " s";
      fs::remove(file, ec);
      return out;
    }
    timespec ts{0, 20'000'000};
    ::nanosleep(&ts, nullptr);
  }
  out.seconds = now_s() - t0;
  if (!WIFEXITED(status) || WEXITSTATUS(status) != 0) {
    out.error = WIFSIGNALED(status) ? "killed by signal " + std::to_string(WTERMSIG(status))
                                    : "exited with status " + std::to_string(WEXITSTATUS(status));
    fs::remove(file, ec);
    return out;
  }
  std::ifstream in(file);
  if (!in) {
    out.error = "wrote no result file";
    return out;
  }
  json rows;
  try {
    in >> rows;
  } catch (const std::exception& e) {
    out.error = std::string("result file is not JSON: ") + e.what();
    fs::remove(file, ec);
    return out;
  }
  fs::remove(file, ec);
  if (!rows.is_array()) {
    out.error = "result file is not a JSON array of rows";
    return out;
  }
  for (auto& r : rows) {
    if (!r.is_object() || !r.contains("workload") || !r.contains("transport")) {
      out.error = "a row lacks \"workload\" or \"transport\"";
      return out;
    }
    if (!r.contains("size")) r["size"] = 0;
    if (!r.contains("wait")) r["wait"] = "n/a";
    if (r.contains("error")) {
      const json& why = r["error"];
      out.row_errors.push_back(
          {{"what", extra_row_id(r)}, {"error", why.is_string() ? why.get<std::string>() : why.dump()}});
      continue;
    }
    if (!r.contains("processes")) r["processes"] = nullptr;
    if (!r.contains("cpus")) r["cpus"] = nullptr;
    if (!r.contains("family")) r["family"] = r["transport"].get<std::string>().rfind("zipc", 0) == 0 ? "zipc" : "peer";
    r["source"] = "zipc-bench-" + p.name;
    out.rows.push_back(r);
  }
  out.ok = true;
  return out;
}

bool lacks_spreads(const json& rows) {
  return std::any_of(rows.begin(), rows.end(), [](const json& r) { return !r.contains("spread"); });
}

json merge_invocations(const std::vector<json>& invocations) {
  // Rows by key, in the order the first invocation that has them wrote them.
  std::vector<std::string> order;
  std::map<std::string, std::vector<const json*>> by_key;
  for (const json& rows : invocations)
    for (const json& r : rows) {
      const std::string k = row_key(r);
      auto [it, added] = by_key.try_emplace(k);
      if (added) order.push_back(k);
      it->second.push_back(&r);
    }
  json merged = json::array();
  for (const std::string& k : order) {
    std::vector<const json*>& seen = by_key[k];
    // The median invocation by the figure --compare judges the row by.
    if (const char* metric = headline(*seen.front()).metric) {
      const auto rank = [&](const json* r) {  // a row without the figure sorts last
        const double x = num(*r, metric);
        return std::isnan(x) ? HUGE_VAL : x;
      };
      std::stable_sort(seen.begin(), seen.end(), [&](const json* a, const json* b) { return rank(a) < rank(b); });
    }
    json row = *seen[(seen.size() - 1) / 2];
    json spread = json::object();
    // Every figure a headline can be (results.hpp), whichever all invocations have.
    const auto add_spread = [&](const char* m) {
      std::vector<double> v;
      for (const json* r : seen)
        if (const double x = num(*r, m); !std::isnan(x)) v.push_back(x);
      if (v.size() != seen.size()) return;
      row[std::string(m) + "_runs"] = v;
      spread[m] = spread_of(v);
    };
    for (const char* m : kRateMetrics) add_spread(m);
    for (const char* m : kLatencyMetrics) add_spread(m);
    row["spread"] = spread;
    row["repetitions"] = seen.size();
    merged.push_back(row);
  }
  return merged;
}

}  // namespace zipc::bench
