/* Symbols of one process image: the modules it mapped (path, load address), read with elfutils'
 * libdwfl when ptt is built with it (PTT_HAVE_LIBDW); otherwise every lookup fails. */
#ifndef PTT_SYMBOLS_H
#define PTT_SYMBOLS_H

#include <stddef.h>
#include <stdint.h>

struct ptt_symbols;

struct ptt_symbols *ptt_symbols_new(void);
/* A module mapped at base (its load bias) spanning size bytes. */
void ptt_symbols_add(struct ptt_symbols *s, uint64_t base, uint64_t size, const char *path);
/* The function containing a code address, and its source file (base name) and line when the
 * debug information has them (line 0 otherwise). 0, or -1 when unknown. */
int ptt_symbols_code(struct ptt_symbols *s, uint64_t addr, char *func, size_t flen, char *file,
                     size_t filelen, int *line);
/* The variable containing a data address, with the member or element path to it
 * ("cache.lock", "locks[3]"). 0, or -1 when unknown. */
int ptt_symbols_data(struct ptt_symbols *s, uint64_t addr, char *name, size_t len);
/* The address of a symbol (for --names), 0 if unknown. */
uint64_t ptt_symbols_lookup(struct ptt_symbols *s, const char *name);
int ptt_symbols_available(void);
void ptt_symbols_free(struct ptt_symbols *s);

#endif
