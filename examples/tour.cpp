// The README's tour: one topic, a subscriber and a publisher. In two shells:
//   example_tour sub     first: prints each message, until the topic is closed
//   example_tour pub     then: publishes three messages and closes the topic
// With no argument it forks both on a private name and checks what arrived.
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <span>
#include <string>
#include <string_view>

#include "zipc/zipc.hpp"

using namespace std::chrono_literals;

namespace {

zipc::Topic open_topic(const std::string& name) {
  zipc::TopicOptions opt;
  opt.capacity_bytes = 1 << 20;                   // the log, bytes
  opt.max_message_size = 1024;                    // the largest message, bytes
  return zipc::Topic::open_or_create(name, opt);  // whoever comes first creates it
}

int subscriber(const std::string& name) {
  zipc::Topic topic = open_topic(name);
  zipc::Subscriber sub = topic.subscribe({.from = zipc::From::oldest()});
  char buf[1024];
  int n = 0;
  for (;;) {
    zipc::ReadResult r = sub.read(std::as_writable_bytes(std::span(buf)), 30s);
    if (r.status == zipc::Status::closed) break;  // closed, and every message read
    if (!r.ok()) return 1;                        // timeout, ...: zipc::to_string(r.status)
    std::printf("#%llu %.*s\n", static_cast<unsigned long long>(r.sequence), static_cast<int>(r.size), buf);
    ++n;
  }
  zipc::Topic::remove(name);
  std::fflush(stdout);  // before a forked child's _exit
  return n == 3 ? 0 : 1;
}

int publisher(const std::string& name) {
  zipc::Topic topic = open_topic(name);
  zipc::Publisher pub = topic.publisher();
  for (const std::string_view msg : {"one", "two", "three"}) {
    if (!pub.publish(std::as_bytes(std::span(msg)), 1s).ok()) return 1;
  }
  topic.close();  // subscribers read what is left, then see Status::closed
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  const std::string_view role = argc > 1 ? argv[1] : "";
  if (role == "sub") return subscriber("tour");
  if (role == "pub") return publisher("tour");
  const std::string name = "tour-" + std::to_string(getpid());
  const pid_t child = fork();
  if (child == 0) _exit(subscriber(name));
  const int published = publisher(name);
  int status = 0;
  waitpid(child, &status, 0);
  return published == 0 && WIFEXITED(status) && WEXITSTATUS(status) == 0 ? 0 : 1;
}
