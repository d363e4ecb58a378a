/*
** lfiles.c: the two file-system questions hot reload asks, which plain Lua
** cannot: a file's modification time (to nanoseconds, so two saves within
** a second are told apart) and the entries of a directory. POSIX only.
*/
#define _POSIX_C_SOURCE 200809L

#include <dirent.h>
#include <errno.h>
#include <string.h>
#include <sys/stat.h>

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
