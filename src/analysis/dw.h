/* libdw's functions, loaded when the first binary is read for its symbols (util/dynlib.h), not
 * linked: linked, libdw and the libraries it needs (libelf, libz, liblzma, libbz2) cost every
 * start of ptt about 1 ms of CPU, and a session of ptt trace, which reads no binary, 1.5 ms
 * (docs/performance.md, "libdw and zlib loaded too"). The code that calls them reads as it
 * would linked. Only symbols.c includes this. */
#ifndef PTT_ANALYSIS_DW_H
#define PTT_ANALYSIS_DW_H

#include <elfutils/libdw.h>
#include <elfutils/libdwfl.h>
#include <libelf.h>

#include "util/dynlib.h"

/* clang-format off */
#define PTT_DW_FUNCS(X) \
    X(dwarf_aggregate_size) X(dwarf_attr) X(dwarf_attr_integrate) X(dwarf_child) \
    X(dwarf_diename) X(dwarf_dieoffset) X(dwarf_errno) X(dwarf_filesrc) X(dwarf_formref_die) \
    X(dwarf_formstring) X(dwarf_formudata) X(dwarf_getlocation) X(dwarf_getscopes) \
    X(dwarf_getscopes_die) X(dwarf_getsrcfiles) X(dwarf_offdie) X(dwarf_siblingof) X(dwarf_tag) \
    X(dwfl_addrmodule) X(dwfl_begin) X(dwfl_build_id_find_elf) X(dwfl_end) X(dwfl_errno) \
    X(dwfl_lineinfo) X(dwfl_module_addrdie) X(dwfl_module_addrinfo) X(dwfl_module_build_id) \
    X(dwfl_module_getdwarf) X(dwfl_module_getelf) X(dwfl_module_getsrc) \
    X(dwfl_module_getsym_info) X(dwfl_module_getsymtab) X(dwfl_module_info) \
    X(dwfl_module_nextcu) X(dwfl_offline_section_address) X(dwfl_report_begin) \
    X(dwfl_report_elf) X(dwfl_report_end) X(dwfl_standard_find_debuginfo) X(elf_errno)
/* clang-format on */
static struct {
    PTT_DW_FUNCS(PTT_DYN_PTR)
} ptt_dw;
static const char *const ptt_dw_names[] = {PTT_DW_FUNCS(PTT_DYN_NAME)};
#ifndef PTT_LIBDW_SONAME
#define PTT_LIBDW_SONAME "libdw.so.1"
#endif
static struct ptt_dynlib ptt_dw_lib = PTT_DYNLIB(PTT_LIBDW_SONAME, ptt_dw, ptt_dw_names);

#define dwarf_aggregate_size (*ptt_dw.dwarf_aggregate_size)
#define dwarf_attr (*ptt_dw.dwarf_attr)
#define dwarf_attr_integrate (*ptt_dw.dwarf_attr_integrate)
#define dwarf_child (*ptt_dw.dwarf_child)
#define dwarf_diename (*ptt_dw.dwarf_diename)
#define dwarf_dieoffset (*ptt_dw.dwarf_dieoffset)
#define dwarf_errno (*ptt_dw.dwarf_errno)
#define dwarf_filesrc (*ptt_dw.dwarf_filesrc)
#define dwarf_formref_die (*ptt_dw.dwarf_formref_die)
#define dwarf_formstring (*ptt_dw.dwarf_formstring)
#define dwarf_formudata (*ptt_dw.dwarf_formudata)
#define dwarf_getlocation (*ptt_dw.dwarf_getlocation)
#define dwarf_getscopes (*ptt_dw.dwarf_getscopes)
#define dwarf_getscopes_die (*ptt_dw.dwarf_getscopes_die)
#define dwarf_getsrcfiles (*ptt_dw.dwarf_getsrcfiles)
#define dwarf_offdie (*ptt_dw.dwarf_offdie)
#define dwarf_siblingof (*ptt_dw.dwarf_siblingof)
#define dwarf_tag (*ptt_dw.dwarf_tag)
#define dwfl_addrmodule (*ptt_dw.dwfl_addrmodule)
#define dwfl_begin (*ptt_dw.dwfl_begin)
#define dwfl_build_id_find_elf (*ptt_dw.dwfl_build_id_find_elf)
#define dwfl_end (*ptt_dw.dwfl_end)
#define dwfl_errno (*ptt_dw.dwfl_errno)
#define dwfl_lineinfo (*ptt_dw.dwfl_lineinfo)
#define dwfl_module_addrdie (*ptt_dw.dwfl_module_addrdie)
#define dwfl_module_addrinfo (*ptt_dw.dwfl_module_addrinfo)
#define dwfl_module_build_id (*ptt_dw.dwfl_module_build_id)
#define dwfl_module_getdwarf (*ptt_dw.dwfl_module_getdwarf)
#define dwfl_module_getelf (*ptt_dw.dwfl_module_getelf)
#define dwfl_module_getsrc (*ptt_dw.dwfl_module_getsrc)
#define dwfl_module_getsym_info (*ptt_dw.dwfl_module_getsym_info)
#define dwfl_module_getsymtab (*ptt_dw.dwfl_module_getsymtab)
#define dwfl_module_info (*ptt_dw.dwfl_module_info)
#define dwfl_module_nextcu (*ptt_dw.dwfl_module_nextcu)
#define dwfl_offline_section_address (*ptt_dw.dwfl_offline_section_address)
#define dwfl_report_begin (*ptt_dw.dwfl_report_begin)
#define dwfl_report_elf (*ptt_dw.dwfl_report_elf)
#define dwfl_report_end (*ptt_dw.dwfl_report_end)
#define dwfl_standard_find_debuginfo (*ptt_dw.dwfl_standard_find_debuginfo)
#define elf_errno (*ptt_dw.elf_errno)

#endif
