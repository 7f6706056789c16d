/* Libraries loaded at their first use (dynlib.h). */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "util/dynlib.h"
#include "util/util.h"

static pthread_mutex_t loading = PTHREAD_MUTEX_INITIALIZER;

/* The table's pointers from h: 1; or 0 with why. The table is a struct of function pointers
 * only, one per name, laid out as an array (PTT_DYNLIB checks the sizes). */
static int bind(struct ptt_dynlib *l, void *h)
{
    for (size_t i = 0; i < l->n; i++) {
        void *fn = dlsym(h, l->names[i]);
        if (!fn) {
            snprintf(l->why, sizeof l->why, "%s: no %s in it", l->soname, l->names[i]);
            return 0;
        }
        /* copied, not stored through a void **: the table's pointers are of other types */
        memcpy((char *)l->table + i * sizeof fn, &fn, sizeof fn);
    }
    return 1;
}

int ptt_dynlib_load(struct ptt_dynlib *l)
{
    pthread_mutex_lock(&loading);
    if (!l->state) {
        /* Local: its symbols are only for the table. Tried again once: dlopen fails as well
         * when an allocation of its fails, which may not fail again. */
        void *h = NULL;
        for (int k = 0; k < 2 && !h; k++)
            if (!(h = dlopen(l->soname, RTLD_NOW | RTLD_LOCAL))) {
                const char *e = dlerror();
                snprintf(l->why, sizeof l->why, "%s", e ? e : l->soname);
            }
        void *probe = h ? NULL : malloc(4096);
        if (!h && !probe) {
            pthread_mutex_unlock(&loading);
            ptt_out_of_memory();
        }
        free(probe);
        l->state = h && bind(l, h) ? 1 : -1;
        if (h && l->state < 0)
            dlclose(h);
    }
    int ok = l->state > 0;
    pthread_mutex_unlock(&loading);
    return ok;
}
