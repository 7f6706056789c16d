/* Symbols of one process image: the modules it mapped (path, load address), read with elfutils'
 * libdwfl when ptt is built with it (PTT_HAVE_LIBDW); otherwise every lookup fails. Each binary
 * is read once (struct ptt_symfiles), whatever the number of processes that map it. Not for
 * use by two threads at once. */
#ifndef PTT_SYMBOLS_H
#define PTT_SYMBOLS_H

#include <stddef.h>
#include <stdint.h>

struct ptt_symbols;
/* The binaries read so far, shared by the process images made from it: free it after them. */
struct ptt_symfiles;

struct ptt_symfiles *ptt_symfiles_new(void);
void ptt_symfiles_free(struct ptt_symfiles *files);
struct ptt_symbols *ptt_symbols_new(struct ptt_symfiles *files);
/* A module mapped at base (its load bias) spanning size bytes. */
void ptt_symbols_add(struct ptt_symbols *s, uint64_t base, uint64_t size, const char *path);
/* The function containing a code address (demangled, without its parameters; in code without
 * symbols, "module+0xOFFSET"), and its source file (base name) and line when the debug
 * information has them (line 0 otherwise). 0, or -1 when no module holds it. */
int ptt_symbols_code(struct ptt_symbols *s, uint64_t addr, char *func, size_t flen, char *file,
                     size_t filelen, int *line);
/* The call site at a code address (a return address - 1) as "file:line": the program's own
 * line. When the call is made by code inlined from a system header (std::mutex::lock from
 * gthr-default.h), the line of the outermost inlined call that the program's source makes, and
 * the header's line in detail ("" otherwise). 0: the program's own code; 1: code from a system
 * header (site is the header's line when no program line calls it); -1: no line known. */
int ptt_symbols_site(struct ptt_symbols *s, uint64_t addr, char *site, size_t len, char *detail,
                     size_t dlen);
/* The variable containing a data address, with the member or element path to it
 * ("cache.lock", "locks[3]"). 0, or -1 when unknown. */
int ptt_symbols_data(struct ptt_symbols *s, uint64_t addr, char *name, size_t len);
/* The function whose code starts at addr (a function pointer's value), demangled with its
 * parameters ("worker(int)", "Pool::run(long)"; a C function: "worker"). 0, or -1 when no
 * function starts there. */
int ptt_symbols_function(struct ptt_symbols *s, uint64_t addr, char *func, size_t flen);
/* The parameter list that ends a demangled function name or function type: "(int)" of
 * "worker(int)"; NULL without one. */
const char *ptt_symbols_params(const char *name);
/* The address of a symbol (for --names), 0 if unknown. */
uint64_t ptt_symbols_lookup(struct ptt_symbols *s, const char *name);
int ptt_symbols_available(void);
/* A C++ (or Rust, legacy mangling) symbol demangled with the C++ ABI's demangler when ptt was
 * built with it; other names as they are. */
void ptt_symbols_demangle(const char *name, char *out, size_t len);
/* Cut a demangled function name's parameter list: "f(int) const" -> "f". */
void ptt_symbols_strip_params(char *name);
/* Whether a source path is a system header (/usr/include, gcc's, libstdc++'s). */
int ptt_symbols_system_file(const char *path);
void ptt_symbols_free(struct ptt_symbols *s);
/* For the tests: addresses at the bounds of every symbol of the binary at path that the index
 * of its symbols says libdw finds no symbol for, at most max of them, asked of libdw. How many
 * libdw did find one for (0), or -1 when the binary cannot be read; *checked: those asked. */
long ptt_symbols_check_index(const char *path, unsigned max, size_t *checked);

#endif
