// The header examples are compiled and linked, not run: they create named
// segments and may wait on peers. Linking proves every name they use exists.
#include <cstdio>

int main() {
  std::puts("every public header's usage example compiled and linked");
  return 0;
}
