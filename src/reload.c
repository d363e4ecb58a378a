/*
** reload.c: migrating agents to a reloaded tree. For now every running node
** is aborted and the agent starts the new version from the root.
*/
#include <string.h>

#include "bonsai.h"
#include "reload.h"
#include "vm.h"

int bs_reload_state(bonsai_agent *a, const Blueprint *nbp, uint8_t *ns) {
  int r = bs_vm_abort(a, 0);
  memset(ns, 0, nbp->statsize + nbp->datasize);
  a->resume = 0;
  return r;
}
