/* A map from a 64-bit key to a record of one size, allocated zeroed on first use. */
#ifndef PTT_HMAP_H
#define PTT_HMAP_H

#include <stddef.h>
#include <stdint.h>

struct ptt_hmap {
    uint64_t *keys;
    void **vals;
    size_t n, cap;
};

/* The record of key; with size != 0, created (zeroed, of size bytes) if absent; else NULL when
 * absent. Exits on out of memory: the tools cannot go on without their tables. */
void *ptt_hmap_get(struct ptt_hmap *m, uint64_t key, size_t size);
/* The i-th slot's record, NULL if empty: for (i = 0; i < m->cap; i++). */
static inline void *ptt_hmap_slot(const struct ptt_hmap *m, size_t i)
{
    return m->vals[i];
}
/* Free every record (each through release first, if not NULL) and the map. */
void ptt_hmap_free(struct ptt_hmap *m, void (*release)(void *record));
/* A well-mixed key for a pair (pid and address, pid and tid...). */
uint64_t ptt_key2(uint64_t a, uint64_t b);

#endif
