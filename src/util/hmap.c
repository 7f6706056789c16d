/* Open addressing, linear probing, grown at half full. */
#include <stdio.h>
#include <stdlib.h>

#include "util/hmap.h"
#include "util/util.h"

void *ptt_hmap_get_slow(struct ptt_hmap *m, uint64_t key, size_t size)
{
    if (size && (m->n + 1) * 2 > m->cap) {
        size_t cap = m->cap ? m->cap * 2 : 256;
        uint64_t *k = ptt_must(calloc(cap, sizeof *k));
        void **v = ptt_must(calloc(cap, sizeof *v));
        for (size_t i = 0; i < m->cap; i++)
            if (m->vals[i]) {
                size_t j = m->keys[i] & (cap - 1);
                while (v[j])
                    j = (j + 1) & (cap - 1);
                k[j] = m->keys[i];
                v[j] = m->vals[i];
            }
        free(m->keys);
        free(m->vals);
        m->keys = k;
        m->vals = v;
        m->cap = cap;
    }
    if (!m->cap)
        return NULL;
    size_t j = key & (m->cap - 1);
    while (m->vals[j] && m->keys[j] != key)
        j = (j + 1) & (m->cap - 1);
    if (m->vals[j] || !size)
        return m->vals[j];
    m->vals[j] = ptt_must(calloc(1, size));
    m->keys[j] = key;
    m->n++;
    return m->vals[j];
}

void ptt_hmap_free(struct ptt_hmap *m, void (*release)(void *record))
{
    for (size_t i = 0; i < m->cap; i++)
        if (m->vals[i]) {
            if (release)
                release(m->vals[i]);
            free(m->vals[i]);
        }
    free(m->keys);
    free(m->vals);
    m->keys = NULL;
    m->vals = NULL;
    m->n = m->cap = 0;
}
