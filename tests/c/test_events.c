/*
** test_events.c: events through the public C API (placeholder, filled
** below).
*/
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include "bonsai.h"
#include "fixture.h"
int main(void) { return 0; }
