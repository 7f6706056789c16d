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

/* ptt_hmap_get when the key is not at its first place or must be made. */
void *ptt_hmap_get_slow(struct ptt_hmap *m, uint64_t key, size_t size);
/* The record of key; with size != 0, created (zeroed, of size bytes) if absent; else NULL when
 * absent. Exits on out of memory: the tools cannot go on without their tables. In line: the
 * analyses look up every event's thread and object. */
static inline void *ptt_hmap_get(struct ptt_hmap *m, uint64_t key, size_t size)
{
    if (m->cap) {
        size_t j = key & (m->cap - 1);
        if (m->vals[j] && m->keys[j] == key)
            return m->vals[j];
    }
    return ptt_hmap_get_slow(m, key, size);
}
/* The i-th slot's record, NULL if empty: for (i = 0; i < m->cap; i++). */
static inline void *ptt_hmap_slot(const struct ptt_hmap *m, size_t i)
{
    return m->vals[i];
}
/* Take key's record out of the map, and return it (the caller frees it), or NULL if absent.
 * Records met in a loop over the slots must not be removed within it. */
void *ptt_hmap_del(struct ptt_hmap *m, uint64_t key);
/* Free every record (each through release first, if not NULL) and the map. */
void ptt_hmap_free(struct ptt_hmap *m, void (*release)(void *record));
/* A well-mixed key for a pair (pid and address, pid and tid...). */
static inline uint64_t ptt_key2(uint64_t a, uint64_t b)
{
    uint64_t k = a * 0x9e3779b97f4a7c15ull ^ b;
    k ^= k >> 31;
    k *= 0xbf58476d1ce4e5b9ull;
    return k ^ k >> 29;
}

/* A key for a string (FNV-1a): names, paths. Two strings may share one: compare them too. */
static inline uint64_t ptt_key_str(const char *s)
{
    uint64_t h = 1469598103934665603ull;
    for (; *s; s++)
        h = (h ^ (unsigned char)*s) * 1099511628211ull;
    return h;
}

#endif
