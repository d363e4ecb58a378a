// header.cpp: include/bonsai.h compiled as C++ (its extern "C" guard).
#include "bonsai.h"

int main() {
  bonsai_env *env = bonsai_env_new(nullptr, nullptr);
  bonsai_env_release(env);
  return 0;
}
