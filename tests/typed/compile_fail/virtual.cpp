// Must not compile: a type with virtual functions.
#include "zipc/typed.hpp"
struct Shape {
  virtual ~Shape() = default;
  int sides;
};
void f() {
  (void)zipc::TypedTopic<Shape>::create("never");
}
