// Must not compile: a pointer as the message type.
#include "zipc/typed.hpp"
struct Order {
  int id;
};
void f() {
  (void)zipc::TypedQueue<Order*>::create("never");
}
