// A separate program for the cross-process type test: opens a typed queue as
// the type named on the command line. Exit 0: opened (and sent one message),
// 10: type mismatch (the message on stdout), other: unexpected.
#include <cstdio>
#include <cstring>
#include <string>

#include "typed_test_types.hpp"
#include "zipc/typed.hpp"

namespace {

template <class T>
int open_as(const char* name) {
  try {
    auto q = zipc::TypedQueue<T>::open(name);
    return q.send(T{}, std::chrono::seconds(1)) == zipc::Status::ok ? 0 : 3;
  } catch (const zipc::Error& e) {
    std::printf("%s\n", e.what());
    return e.errc() == zipc::Errc::type_mismatch ? 10 : 2;
  }
}

}  // namespace

int main(int argc, char** argv) {
  if (argc != 3) return 64;
  if (std::strcmp(argv[2], "order") == 0) return open_as<typed_test::Order>(argv[1]);
  if (std::strcmp(argv[2], "quote") == 0) return open_as<typed_test::Quote>(argv[1]);
  return 64;
}
