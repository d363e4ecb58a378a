/*
** trace_leaf.c: the scripted, tracing C leaf used by the core tests, the
** text form of tree definitions and the checking allocator.
*/
#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
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

void trace_append(Trace *t, const char *s) {
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
    if (c->status >= 0 && c->status <= BONSAI_ABORTED)
      snprintf(line, sizeof line, "exit %s %s", s->name,
               statusname[c->status]);
    else
      snprintf(line, sizeof line, "exit %s %d", s->name, c->status);
    break;
  case BONSAI_EV_ABORT: /* (a final call marked, when the script asks) */
    snprintf(line, sizeof line, "abort %s%s", s->name,
             s->marks && c->status != BONSAI_RUNNING ? " final" : "");
    break;
  default:
    snprintf(line, sizeof line, "tick %s", s->name);
    break;
  }
  trace_append(s->trace, line);
  if (s->fail_event == c->event + 1)
    return bonsai_agent_error(c->agent, "%s failed on purpose", s->name);
  if (c->event == BONSAI_EV_ABORT && s->latent != 0 &&
      c->status == BONSAI_RUNNING) { /* it takes its time */
    if (s->latent > 0)
      s->latent--;
    return BONSAI_RUNNING;
  }
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
  trace_register_flags(env, s,
                       BONSAI_LEAF_ENTER | BONSAI_LEAF_EXIT |
                           BONSAI_LEAF_ABORT);
}

void trace_register_flags(bonsai_env *env, Script *s, unsigned flags) {
  bonsai_leaf_register(env, s->name, trace_leaf, s, flags);
}

void trace_script(Script *s, const char *name, Trace *t, const char *codes) {
  int k;
  memset(s, 0, sizeof *s);
  s->name = name;
  s->trace = t;
  for (k = 0; k < 15 && codes[k] != '\0'; k++) {
    switch (codes[k]) {
    case 'R': s->statuses[k] = BONSAI_RUNNING; break;
    case 'S': s->statuses[k] = BONSAI_SUCCESS; break;
    case 'F': s->statuses[k] = BONSAI_FAILURE; break;
    default: s->statuses[k] = 42; break;
    }
  }
}

/* {====== trace_def: a small recursive-descent reader of tree specs */

typedef struct Reader {
  bonsai_def *d;
  const char *p;
} Reader;

static void skipspace(Reader *r) {
  while (isspace((unsigned char)*r->p))
    r->p++;
}

/* Reads an identifier (letters, digits, '_', '#', '[', ']') into buf. */
static int ident(Reader *r, char *buf, size_t size) {
  size_t n = 0;
  skipspace(r);
  while (isalnum((unsigned char)*r->p) || *r->p == '_' || *r->p == '#' ||
         *r->p == '[' || *r->p == ']') {
    if (n + 1 < size)
      buf[n++] = *r->p;
    r->p++;
  }
  buf[n] = '\0';
  return n > 0 ? 0 : -1;
}

/* Reads a parameter value up to ',', '}' or ')'; returns 1 if quoted. */
static int value(Reader *r, char *buf, size_t size) {
  size_t n = 0;
  int quoted = 0;
  skipspace(r);
  if (*r->p == '\'') {
    quoted = 1;
    r->p++;
    while (*r->p != '\0' && *r->p != '\'') {
      if (n + 1 < size)
        buf[n++] = *r->p;
      r->p++;
    }
    if (*r->p == '\'')
      r->p++;
  } else {
    while (*r->p != '\0' && *r->p != ',' && *r->p != '}' && *r->p != ')' &&
           !isspace((unsigned char)*r->p)) {
      if (n + 1 < size)
        buf[n++] = *r->p;
      r->p++;
    }
  }
  buf[n] = '\0';
  return quoted;
}

static int params(Reader *r) {
  skipspace(r);
  if (*r->p != '{')
    return 0;
  r->p++;
  for (;;) {
    char key[32], val[128], *end;
    double num;
    int quoted;
    if (ident(r, key, sizeof key) != 0)
      return -1;
    skipspace(r);
    if (*r->p++ != '=')
      return -1;
    quoted = value(r, val, sizeof val);
    num = strtod(val, &end);
    if (!quoted && (strcmp(val, "true") == 0 || strcmp(val, "false") == 0)) {
      bonsai_value b;
      b.type = BONSAI_TBOOLEAN;
      b.u.b = val[0] == 't';
      bonsai_def_value(r->d, key, b);
    } else if (!quoted && val[0] != '\0' && *end == '\0')
      bonsai_def_number(r->d, key, num);
    else
      bonsai_def_string(r->d, key, val);
    skipspace(r);
    if (*r->p == ',') {
      r->p++;
      continue;
    }
    if (*r->p++ != '}')
      return -1;
    return 0;
  }
}

static int node(Reader *r) {
  char word[64], name[64];
  int cond = 0, kind;
  bonsai_kindinfo info;
  const char *nm = NULL;
  skipspace(r);
  if (*r->p == '?') {
    cond = 1;
    r->p++;
  }
  if (ident(r, word, sizeof word) != 0)
    return -1;
  skipspace(r);
  if (*r->p == ':') {
    r->p++;
    if (ident(r, name, sizeof name) != 0)
      return -1;
    nm = name;
  }
  if (isupper((unsigned char)word[0])) { /* a registered leaf */
    bonsai_def_leaf(r->d, cond ? BONSAI_CONDITION : BONSAI_ACTION, nm, word,
                    NULL);
    return params(r); /* abort_timeout */
  }
  for (kind = 0; kind < BONSAI_NKINDS; kind++)
    if (strcmp(word, bonsai_kind_name(kind)) == 0)
      break;
  if (kind == BONSAI_NKINDS)
    return -1;
  if (bonsai_kind_info(kind, &info) == BONSAI_OK &&
      info.cls == BONSAI_CLASS_LEAF) {
    bonsai_def_leaf(r->d, kind, nm, NULL, NULL);
    return params(r);
  }
  bonsai_def_begin(r->d, kind, nm);
  if (params(r) != 0)
    return -1;
  skipspace(r);
  if (*r->p == '(') {
    r->p++;
    for (;;) {
      if (node(r) != 0)
        return -1;
      skipspace(r);
      if (*r->p == ',') {
        r->p++;
        continue;
      }
      if (*r->p++ != ')')
        return -1;
      break;
    }
  }
  bonsai_def_end(r->d);
  return 0;
}

int trace_def(bonsai_def *d, const char *spec) {
  Reader r;
  r.d = d;
  r.p = spec;
  if (node(&r) != 0)
    return -1;
  skipspace(&r);
  return *r.p == '\0' ? 0 : -1;
}

/* }====== */

/* {====== trace_alloc: each block carries its size in a header */

#define HEAD 16

void *trace_alloc(void *ud, void *ptr, size_t osize, size_t nsize) {
  AllocStats *st = ud;
  char *block = ptr != NULL ? (char *)ptr - HEAD : NULL;
  size_t real = 0;
  if (block != NULL) {
    memcpy(&real, block, sizeof real);
    if (real != osize)
      st->bad_osize++;
  }
  if (nsize == 0) {
    if (block != NULL) {
      st->bytes -= real;
      st->blocks--;
      free(block);
    }
    return NULL;
  }
  if (nsize > real) {
    st->calls++;
    if (st->fail_at != 0 && st->calls == st->fail_at) {
      st->failed++;
      return NULL;
    }
  }
  block = realloc(block, nsize + HEAD);
  if (block == NULL)
    return NULL;
  memcpy(block, &nsize, sizeof nsize);
  if (ptr == NULL)
    st->blocks++;
  st->bytes = st->bytes - real + nsize;
  return block + HEAD;
}

/* }====== */
