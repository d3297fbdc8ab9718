// Must not compile: a member that owns heap memory (not trivially copyable).
#include <string>
#include "zipc/typed.hpp"
struct Named {
  std::string name;
};
void f() {
  (void)zipc::TypedQueue<Named>::create("never");
}
