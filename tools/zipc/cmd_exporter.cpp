// zipc exporter: serves every channel's metrics on GET /metrics for
// Prometheus (OpenMetrics 1.0, or the text format 0.0.4 to a scraper that
// does not ask for OpenMetrics). Each scrape reads the segments read-only
// (zipc::inspect_channel): no participant slot, no write to shared memory.
// HTTP is cpp-httplib's; without it the command only says so.
#include <atomic>
#include <cctype>
#include <cerrno>
#include <charconv>
#include <cstring>
#include <thread>

#include "common.hpp"
#include "metrics_options.hpp"

#if ZIPC_TOOL_HAVE_HTTPLIB
#include <httplib.h>
#include <sys/socket.h>
#endif

namespace zipc_tool {
namespace {

struct ExporterOptions {
  std::string listen = "127.0.0.1:9464";
  MetricsFilterOptions filter;
  unsigned threads = 4;
};

struct ListenAddress {
  std::string host;
  int port = 0;
};

// HOST:PORT or [IPV6]:PORT, port 0..65535 (0: any free port).
ListenAddress parse_listen(const std::string& text) {
  const std::size_t colon = text.rfind(':');
  if (colon == std::string::npos || colon == 0 || colon + 1 == text.size()) {
    fail(kUsage, text, "--listen: want HOST:PORT (e.g. 127.0.0.1:9464 or [::1]:9464)");
  }
  ListenAddress a;
  a.host = text.substr(0, colon);
  if (a.host.front() == '[') {
    if (a.host.size() < 3 || a.host.back() != ']') fail(kUsage, text, "--listen: an IPv6 host is written [ADDR]");
    a.host = a.host.substr(1, a.host.size() - 2);
  } else if (a.host.find(':') != std::string::npos) {
    fail(kUsage, text, "--listen: an IPv6 host is written [ADDR]:PORT");
  }
  for (const char c : a.host) {
    if (std::isalnum(static_cast<unsigned char>(c)) == 0 && c != '.' && c != '-' && c != ':' && c != '_') {
      fail(kUsage, text, "--listen: the host holds a character no host name or address has");
    }
  }
  const std::string port = text.substr(colon + 1);
  unsigned long value = 0;
  const auto [end, ec] = std::from_chars(port.data(), port.data() + port.size(), value);
  if (ec != std::errc{} || end != port.data() + port.size() || value > 65535) {
    fail(kUsage, text, "--listen: the port is not a number from 0 to 65535");
  }
  a.port = static_cast<int>(value);
  return a;
}

#if ZIPC_TOOL_HAVE_HTTPLIB

int run_exporter(const ExporterOptions& o) {
  const ListenAddress address = parse_listen(o.listen);
  const MetricsFilter filter = make_metrics_filter(o.filter);
  install_stop_handler();

  httplib::Server server;
  const unsigned threads = o.threads;
  server.new_task_queue = [threads] { return new httplib::ThreadPool(threads); };
  // Requests are small: no body, header lines of at most 8 KiB (httplib's
  // limit); a client that stalls is dropped after 5 s.
  server.set_payload_max_length(4096);
  server.set_read_timeout(5, 0);
  server.set_write_timeout(5, 0);
  server.set_keep_alive_timeout(5);
  // SO_REUSEADDR (a restart binds at once) but not httplib's SO_REUSEPORT,
  // with which a second exporter would share the port and half the scrapes.
  server.set_socket_options([](int sock) {
    const int yes = 1;
    (void)::setsockopt(sock, SOL_SOCKET, SO_REUSEADDR, &yes, sizeof(yes));
  });
  server.Get("/metrics", [&filter](const httplib::Request& req, httplib::Response& res) {
    const MetricsFormat format = metrics_format_for_accept(req.get_header_value("Accept"));
    try {
      res.set_content(render_metrics(inspect_matching_channels(filter), filter, format), metrics_content_type(format));
    } catch (const std::exception& e) {
      res.status = 500;
      res.set_content(std::string("zipc exporter: ") + e.what() + "\n", "text/plain; charset=utf-8");
    }
  });

  int port = address.port;
  errno = 0;
  if (port == 0) {
    port = server.bind_to_any_port(address.host);
    if (port <= 0) port = -1;
  } else if (!server.bind_to_port(address.host, port)) {
    port = -1;
  }
  if (port < 0) {
    const int err = errno;
    fail(kFailure, o.listen,
         std::string("cannot listen there: ") + (err != 0 ? std::strerror(err) : "the host does not resolve"));
  }
  const bool v6 = address.host.find(':') != std::string::npos;
  std::printf("zipc exporter: serving http://%s%s%s:%d/metrics\n", v6 ? "[" : "", address.host.c_str(), v6 ? "]" : "",
              port);
  std::fflush(stdout);

  // listen_after_bind() returns once stop() closes the socket: a watcher
  // turns SIGINT/SIGTERM into that.
  std::atomic<bool> done{false};
  std::thread watcher([&] {
    while (!done.load(std::memory_order_relaxed) && !stop_requested()) {
      pause_until(now_monotonic_ns() + 100'000'000);
    }
    server.stop();
  });
  const bool served = server.listen_after_bind();
  done.store(true, std::memory_order_relaxed);
  watcher.join();
  if (!served && !stop_requested()) fail(kFailure, o.listen, "the server stopped on an accept error");
  return kOk;
}

#else

int run_exporter(const ExporterOptions& o) {
  (void)parse_listen(o.listen);
  (void)make_metrics_filter(o.filter);
  fail(kFailure, "", "this zipc was built without cpp-httplib (make deps installs it); zipc metrics prints one scrape");
}

#endif

}  // namespace

Command add_exporter(CLI::App& root) {
  auto o = std::make_shared<ExporterOptions>();
  CLI::App* app = root.add_subcommand("exporter", "serve every channel's metrics to Prometheus on GET /metrics");
  app->footer(
      "Example:\n  zipc exporter --listen 127.0.0.1:9464\n"
      "  zipc exporter --listen 0.0.0.0:9464 --match orders.   # channels 'orders.*' only\n"
      "Read-only: no channel is joined or written. Port 0 picks a free port (printed on stdout).\n"
      "Stops on SIGINT/SIGTERM. Metrics and a Grafana dashboard: docs/guide/operations.md.");
  app->add_option("--listen", o->listen, "HOST:PORT to serve on ([ADDR]:PORT for IPv6)");
  add_metrics_filter_options(app, o->filter);
  app->add_option("--threads", o->threads, "scrapes served at once")->check(CLI::Range(1u, 64u));
  return {app, [o] { return run_exporter(*o); }};
}

}  // namespace zipc_tool
