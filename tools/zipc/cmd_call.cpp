// zipc call NAME [REQUEST]: one Rpc request, the response printed.
#include "args.hpp"
#include "message_format.hpp"

namespace zipc_tool {
namespace {

struct CallOptions {
  std::string name;
  std::string request;
  bool from_stdin = true;
  std::string format = "text";
  Duration timeout = Duration::seconds(5);
  std::uint64_t repeat = 1;  // calls of the same request (a load generator); the last response is printed
  double rate = 0;           // calls/s when repeating (0: as fast as answers come)
};

// Connects, retrying in 100 ms slices while the server's segment initializes
// (so that ^C is seen), up to timeout.
zipc::RpcClient connect(const std::string& name, Duration timeout) {
  const std::uint64_t give_up = timeout.deadline(now_monotonic_ns());
  for (;;) {
    const std::uint64_t now = now_monotonic_ns();
    const auto slice =
        std::chrono::milliseconds(give_up <= now ? 0 : std::min<std::uint64_t>(give_up - now, 100'000'000) / 1'000'000);
    try {
      return zipc::RpcClient::connect(name, slice);
    } catch (const zipc::Error& e) {
      if (e.errc() != zipc::Errc::init_timeout || now_monotonic_ns() >= give_up) throw;
      if (stop_requested()) fail(kFailure, name, "interrupted while connecting");
    }
  }
}

// A remote error's text on one line: the server wrote it (it may be hostile),
// so control bytes are escaped and the text is cut at 1000 bytes.
std::string one_line(std::string_view text) {
  constexpr std::size_t kMax = 1000;
  std::string out;
  for (const char c : text.substr(0, kMax)) {
    const auto u = static_cast<unsigned char>(c);
    if (u < 0x20 || u == 0x7f) {
      char esc[8];
      std::snprintf(esc, sizeof esc, "\\x%02x", u);
      out += esc;
    } else {
      out += c;
    }
  }
  if (text.size() > kMax) out += "... (" + std::to_string(text.size()) + " bytes)";
  return out;
}

// One call, its answer awaited in 50 ms slices (^C ends the wait).
zipc::RpcResponse call_once(zipc::RpcClient& client, const std::string& name, std::span<const std::byte> request,
                            Duration timeout) {
  zipc::RpcTicket t = client.call_async(request);
  if (t.status() == zipc::Status::too_large) {
    fail(kUsage, name,
         "request of " + std::to_string(request.size()) + " bytes is larger than the service's " +
             std::to_string(client.max_request_size()) + "-byte limit");
  }
  if (!t.ok()) fail(exit_code_for(t.status()), name, std::string("call failed: ") + zipc::to_string(t.status()));
  const std::uint64_t give_up = timeout.deadline(now_monotonic_ns());
  for (;;) {
    const std::uint64_t now = now_monotonic_ns();
    const std::uint64_t left = give_up <= now ? 0 : std::min<std::uint64_t>(give_up - now, 50'000'000);
    zipc::RpcResponse r = t.wait(std::chrono::nanoseconds(left));
    if (r.status() != zipc::Status::timeout || left == 0 || stop_requested()) return r;
  }
}

int run_call(CallOptions o) {
  const OutFormat f = parse_out_format(o.format);
  if (o.from_stdin) {
    std::vector<char> chunk(1 << 16);
    while (std::size_t got = std::fread(chunk.data(), 1, chunk.size(), stdin)) o.request.append(chunk.data(), got);
    if (std::ferror(stdin)) fail(kIo, "stdin", std::strerror(errno));
  }
  install_stop_handler();
  zipc::RpcClient client = connect(o.name, o.timeout);
  const std::span<const std::byte> request{reinterpret_cast<const std::byte*>(o.request.data()), o.request.size()};
  zipc::RpcResponse r;
  const std::uint64_t t0 = now_monotonic_ns();
  for (std::uint64_t i = 0; i < o.repeat; ++i) {
    if (o.rate > 0) {  // paced: call i is due at t0 + i / rate
      const auto due = t0 + static_cast<std::uint64_t>(static_cast<double>(i) * 1e9 / o.rate);
      if (!pause_until(due)) break;
    }
    if (stop_requested()) break;
    r.release();  // the previous answer's slot is free before the next call (one call out at a time)
    r = call_once(client, o.name, request, o.timeout);
    if (stop_requested()) break;
    // A failed call: the handler's own error (type, code and message), or the status.
    if (r.status() == zipc::Status::remote_error) {
      std::string what = "call failed: remote ";
      what += r.error_type().empty() ? std::string("error") : one_line(r.error_type());
      what += " (code " + std::to_string(r.error_code()) + ")";
      if (!r.error_message().empty()) what += ": " + one_line(r.error_message());
      fail(kRemote, o.name, what);
    }
    if (r.status() == zipc::Status::too_large) {
      fail(kUsage, o.name,
           "call failed: the response is larger than the service's " + std::to_string(client.max_response_size()) +
               "-byte limit");
    }
    if (!r.ok()) fail(exit_code_for(r.status()), o.name, std::string("call failed: ") + zipc::to_string(r.status()));
  }
  if (!r.ok()) return kOk;  // stopped before the first call
  OutBuffer out(stdout);
  emit_message(out, f, 0, now_realtime_ns(), r.data());
  return kOk;
}

}  // namespace

Command add_call(CLI::App& root) {
  auto o = std::make_shared<CallOptions>();
  CLI::App* app = root.add_subcommand("call", "send one Rpc request (argument or stdin) and print the response");
  app->footer(
      "Example:\n  zipc call upper 'hello'                    # prints HELLO from `zipc serve upper --upper`\n"
      "  printf 'raw\\0bytes' | zipc call svc --format hex\n"
      "  zipc call upper hi --repeat 1000000 --rate 1000   # load: 1000 calls/s (see zipc top)\n"
      "Exit 3 when no server serves NAME, 5 when no answer came in --timeout.");
  app->add_option("name", o->name, "Rpc service name")->required();
  app->add_option("request", o->request, "request text (default: all of stdin)")->each([o](const std::string&) {
    o->from_stdin = false;
  });
  app->add_option("--format", o->format, "response as text | hex | json")
      ->check(CLI::IsMember({"text", "hex", "json"}));
  add_duration(app, "--timeout", o->timeout, true, Duration{}, kMaxDuration,
               "how long to connect and to wait for each response (0: do not wait)");
  add_count(app, "--repeat", o->repeat, 1, kNoMax, "send the request N times (prints the last response; ^C stops)");
  add_real(app, "--rate", o->rate, 0, true, 1e9, "with --repeat: calls per second (0: back to back)");
  return {app, [o] { return run_call(*o); }};
}

}  // namespace zipc_tool
