/*
** trace_leaf.c: the scripted, tracing C leaf used by the core tests.
*/
#include <stdio.h>
#include <string.h>

#include "trace_leaf.h"

static const char *const statusname[] = {"idle", "running", "success",
                                         "failure", "aborted"};

void trace_clear(Trace *t) {
  t->n = 0;
  t->buf[0] = '\0';
}

const char *trace_take(Trace *t) {
  static char out[sizeof t->buf];
  memcpy(out, t->buf, t->n + 1);
  trace_clear(t);
  return out;
}

static void add(Trace *t, const char *s) {
  size_t len = strlen(s);
  if (t->n > 0 && t->n + 2 < sizeof t->buf) {
    memcpy(t->buf + t->n, "; ", 2);
    t->n += 2;
  }
  if (t->n + len >= sizeof t->buf)
    len = sizeof t->buf - t->n - 1;
  memcpy(t->buf + t->n, s, len);
  t->n += len;
  t->buf[t->n] = '\0';
}

int trace_leaf(const bonsai_call *c) {
  Script *s = (Script *)c->data;
  char line[96];
  int st;
  switch (c->event) {
  case BONSAI_EV_ENTER:
    snprintf(line, sizeof line, "enter %s", s->name);
    break;
  case BONSAI_EV_EXIT:
    snprintf(line, sizeof line, "exit %s %s", s->name, statusname[c->status]);
    break;
  case BONSAI_EV_ABORT:
    snprintf(line, sizeof line, "abort %s", s->name);
    break;
  default:
    snprintf(line, sizeof line, "tick %s", s->name);
    break;
  }
  add(s->trace, line);
  if (s->fail_event == c->event + 1)
    return bonsai_agent_error(c->agent, "%s failed on purpose", s->name);
  if (c->event != BONSAI_EV_TICK)
    return BONSAI_OK;
  {
    int k = s->at < 15 ? s->at : 15;
    while (k > 0 && s->statuses[k] == 0) /* past the script: the last one */
      k--;
    st = s->statuses[k] != 0 ? s->statuses[k] : BONSAI_SUCCESS;
  }
  s->at++;
  return st;
}

void trace_register(bonsai_env *env, Script *s) {
  bonsai_leaf_register(env, s->name, trace_leaf, s,
                       BONSAI_LEAF_ENTER | BONSAI_LEAF_EXIT |
                           BONSAI_LEAF_ABORT);
}
