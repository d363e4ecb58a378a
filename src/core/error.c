/*
** error.c: an agent's error record: the first error of an operation, its
** message (a buffer allocated on the first error), the node at fault and
** the version that node belongs to (held, so its path can still be told
** after a reload).
*/
#include <stdarg.h>
#include <stdio.h>

#include "bonsai.h"
#include "compile.h"
#include "env.h"
#include "error.h"

void bonsai_agent_clearerr(bonsai_agent *a) {
  a->failed = 0;
  a->errnode = BS_NONE;
  if (a->err != NULL)
    a->err[0] = '\0';
  bs_bp_release(a->errbp);
  a->errbp = NULL;
}

/* Records the error of the current operation at node (of the version the
** agent runs), unless one is recorded already: the first error counts. */
static void verror(bonsai_agent *a, uint32_t node, const char *fmt,
                   va_list ap) {
  if (a->failed)
    return;
  a->failed = 1;
  a->errnode = node;
  if (node != BS_NONE) {
    a->errbp = a->bp;
    bs_bp_retain(a->bp);
  }
  if (a->err == NULL &&
      (a->err = bs_malloc(a->tree->env, BS_ERRSIZE)) == NULL)
    return;
  vsnprintf(a->err, BS_ERRSIZE, fmt, ap);
}

void bs_agent_fail(bonsai_agent *a, uint32_t node, const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  verror(a, node, fmt, ap);
  va_end(ap);
}

int bonsai_agent_error(bonsai_agent *a, const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  verror(a, a->current, fmt, ap);
  va_end(ap);
  return BONSAI_ERROR;
}

const char *bonsai_agent_errmsg(const bonsai_agent *a) {
  return a->err != NULL ? a->err : "";
}

unsigned bonsai_agent_errnode(const bonsai_agent *a) { return a->errnode; }

size_t bonsai_agent_errpath(const bonsai_agent *a, char *buf, size_t size) {
  if (a->errbp == NULL || a->errnode >= a->errbp->n) {
    if (size > 0)
      buf[0] = '\0';
    return 0;
  }
  return bs_bp_path(a->errbp, a->errnode, buf, size);
}
