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

/* Whether slot h lies in the cyclic range (i, k]. */
static int between(size_t i, size_t h, size_t k)
{
    return i <= k ? i < h && h <= k : h > i || h <= k;
}

/* The hole left is filled by shifting back the records after it that may move there (their own
 * slot is not between the hole and where they are), so that every probe still finds its record
 * without tombstones. */
void *ptt_hmap_del(struct ptt_hmap *m, uint64_t key)
{
    if (!m->cap)
        return NULL;
    size_t mask = m->cap - 1, i = key & mask;
    while (m->vals[i] && m->keys[i] != key)
        i = (i + 1) & mask;
    void *v = m->vals[i];
    if (!v)
        return NULL;
    m->vals[i] = NULL;
    m->n--;
    for (size_t k = (i + 1) & mask; m->vals[k]; k = (k + 1) & mask)
        if (!between(i, m->keys[k] & mask, k)) {
            m->keys[i] = m->keys[k];
            m->vals[i] = m->vals[k];
            m->vals[k] = NULL;
            i = k;
        }
    return v;
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
