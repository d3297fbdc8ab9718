// Must not compile: a reference as the rpc request type.
#include "zipc/typed.hpp"
struct Order {
  int id;
};
void f() {
  (void)zipc::TypedRpcServer<Order&, Order>::create("never");
}
