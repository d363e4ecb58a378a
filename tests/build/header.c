/*
** header.c: include/bonsai.h must compile on its own, as strict C99 (and,
** from header.cpp, as C++): an engine includes nothing else.
*/
#include "bonsai.h"

int main(void) {
  bonsai_value v;
  v.type = BONSAI_TNIL;
  return v.type == BONSAI_TNIL && BONSAI_NKINDS > 0 ? 0 : 1;
}
