/*
** lfiles.c: the file-system questions plain Lua cannot ask: for hot
** reload, a file's modification time (to nanoseconds, so two saves within
** a second are told apart) and the entries of a directory; for the files
** a tree file names, where a path really leads (symbolic links resolved)
** and a bounded read that never waits on a FIFO or a device. POSIX only.
*/
#define _XOPEN_SOURCE 700 /* POSIX 2008 and realpath */

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "lbonsai.h"

/* bt._mtime(path): seconds (with fraction) plus size, or nil, message */
int lb_mtime(lua_State *L) {
  const char *path = luaL_checkstring(L, 1);
  struct stat sb;
  if (stat(path, &sb) != 0) {
    luaL_pushfail(L);
    lua_pushfstring(L, "%s: %s", path, strerror(errno));
    return 2;
  }
  lua_pushnumber(L, (lua_Number)sb.st_mtim.tv_sec +
                        (lua_Number)sb.st_mtim.tv_nsec * 1e-9);
  lua_pushinteger(L, (lua_Integer)sb.st_size);
  return 2;
}

static int dir_gc(lua_State *L) {
  DIR **d = (DIR **)lua_touserdata(L, 1);
  if (*d != NULL)
    closedir(*d);
  *d = NULL;
  return 0;
}

/* bt._dir(path): list of entry names (no "." or ".."), or nil, message.
** The DIR lives in a userdata, so a memory error while listing leaks
** nothing. */
int lb_dir(lua_State *L) {
  const char *path = luaL_checkstring(L, 1);
  DIR **d = (DIR **)lua_newuserdatauv(L, sizeof *d, 0);
  struct dirent *e;
  lua_Integer n = 0;
  *d = NULL;
  if (luaL_newmetatable(L, "bonsai.dir")) {
    lua_pushcfunction(L, dir_gc);
    lua_setfield(L, -2, "__gc");
  }
  lua_setmetatable(L, -2);
  if ((*d = opendir(path)) == NULL) {
    luaL_pushfail(L);
    lua_pushfstring(L, "%s: %s", path, strerror(errno));
    return 2;
  }
  lua_newtable(L);
  while ((e = readdir(*d)) != NULL) {
    if (strcmp(e->d_name, ".") == 0 || strcmp(e->d_name, "..") == 0)
      continue;
    lua_pushstring(L, e->d_name);
    lua_rawseti(L, -2, ++n);
  }
  closedir(*d);
  *d = NULL;
  return 1;
}

/* bt._realpath(path): the absolute path with every symbolic link, "." and
** ".." resolved, or nil, message (the file must exist). */
int lb_realpath(lua_State *L) {
  const char *path = luaL_checkstring(L, 1);
  char real[PATH_MAX];
  if (realpath(path, real) == NULL) {
    luaL_pushfail(L);
    lua_pushfstring(L, "%s: %s", path, strerror(errno));
    return 2;
  }
  lua_pushstring(L, real);
  return 1;
}

static int fd_gc(lua_State *L) {
  int *fd = (int *)lua_touserdata(L, 1);
  if (*fd >= 0)
    close(*fd);
  *fd = -1;
  return 0;
}

/* Closes the descriptor (its userdata at index 3) and returns nil and the
** message on top. */
static int readfail(lua_State *L, int *fd) {
  if (*fd >= 0)
    close(*fd);
  *fd = -1;
  luaL_pushfail(L);
  lua_insert(L, -2);
  return 2;
}

/* Pushes "path: file too large (N bytes, at most MAX)", or "(more than
** MAX bytes)" when the file said less than it had (read != 0). */
static void toolarge(lua_State *L, const char *path, long long n,
                     long long max, int read) {
  char text[96];
  if (read)
    snprintf(text, sizeof text, "more than %lld bytes", max);
  else
    snprintf(text, sizeof text, "%lld bytes, at most %lld", n, max);
  lua_pushfstring(L, "%s: file too large (%s)", path, text);
}

/* bt._readfile(path, max): the bytes of a regular file, or nil, message.
** The file is opened without blocking (O_NONBLOCK: a FIFO does not wait
** for a writer) and refused unless fstat says it is a regular file (not a
** FIFO, a device, a socket or a directory); it is read until its end and
** refused once more than max bytes came, whatever its size said. The
** descriptor lives in a userdata whose __gc closes it and the bytes in
** another, so a memory error leaks nothing. */
int lb_readfile(lua_State *L) {
  const char *path = luaL_checkstring(L, 1);
  lua_Integer max = luaL_checkinteger(L, 2);
  struct stat sb;
  size_t cap, len = 0;
  char *buf;
  int *fd;
  lua_settop(L, 2);
  fd = (int *)lua_newuserdatauv(L, sizeof *fd, 0); /* index 3 */
  *fd = -1;
  if (luaL_newmetatable(L, "bonsai.fd")) {
    lua_pushcfunction(L, fd_gc);
    lua_setfield(L, -2, "__gc");
  }
  lua_setmetatable(L, -2);
  luaL_argcheck(L, max >= 0, 2, "a size expected");
  *fd = open(path, O_RDONLY | O_NONBLOCK | O_NOCTTY | O_CLOEXEC);
  if (*fd < 0 || fstat(*fd, &sb) != 0) {
    lua_pushfstring(L, "%s: %s", path, strerror(errno));
    return readfail(L, fd);
  }
  if (!S_ISREG(sb.st_mode)) {
    lua_pushfstring(L, "%s: not a regular file (%s)", path,
                    S_ISDIR(sb.st_mode)    ? "a directory"
                    : S_ISFIFO(sb.st_mode) ? "a FIFO"
                    : S_ISSOCK(sb.st_mode) ? "a socket"
                                           : "a device");
    return readfail(L, fd);
  }
  if ((lua_Integer)sb.st_size > max) {
    toolarge(L, path, (long long)sb.st_size, (long long)max, 0);
    return readfail(L, fd);
  }
  /* its size is a first guess only (a file may grow, /proc says 0) */
  cap = (size_t)sb.st_size + 1;
  if (cap < 4096)
    cap = 4096;
  if (cap > (size_t)max + 1)
    cap = (size_t)max + 1;
  buf = (char *)lua_newuserdatauv(L, cap, 0); /* index 4 */
  for (;;) {
    ssize_t n;
    if (len == cap) { /* full: twice as large, up to max + 1 */
      size_t more = cap * 2 > (size_t)max + 1 ? (size_t)max + 1 : cap * 2;
      char *nbuf = (char *)lua_newuserdatauv(L, more, 0);
      memcpy(nbuf, buf, len);
      lua_replace(L, 4);
      buf = nbuf;
      cap = more;
    }
    n = read(*fd, buf + len, cap - len);
    if (n < 0 && errno == EINTR)
      continue;
    if (n < 0) {
      lua_pushfstring(L, "%s: %s", path, strerror(errno));
      return readfail(L, fd);
    }
    if (n == 0)
      break;
    len += (size_t)n;
    if (len > (size_t)max) {
      toolarge(L, path, (long long)len, (long long)max, 1);
      return readfail(L, fd);
    }
  }
  close(*fd);
  *fd = -1;
  lua_pushlstring(L, buf, len);
  return 1;
}
