/*
 * libdw.h - elfutils' libdw, referred to weakly.  Private to the two
 * users of libdw: src/report/symbolize.c (names of code addresses) and
 * src/record/stack.c (skip=REGEX).
 *
 * Why weak: libsyncprof.a must keep linking with libc alone (static
 * binaries, tests/install_test.sh), as pprof_proto.c explains for
 * protobuf-c.  Every function of libdw that syncprof calls is declared
 * weak here, so an object that includes this header links without -ldw;
 * where libdw is not linked in, its functions are NULL and
 * sp_libdw_present() says so: the symbolizer falls back to dladdr(), and
 * skip regexes are ignored with a warning.  libsyncprof.so and
 * libsyncprof-preload.so link libdw (DT_NEEDED, see CMakeLists.txt), so
 * for them it is always there.
 *
 * A call to a libdw function that is not listed here is a strong
 * reference: the static link of tests/install_test.sh fails on it.
 */
#ifndef SP_BASE_LIBDW_H
#define SP_BASE_LIBDW_H

#ifdef SYNCPROF_HAVE_LIBDW
#pragma weak dwarf_attr
#pragma weak dwarf_cfi_addrframe
#pragma weak dwarf_frame_cfa
#pragma weak dwarf_frame_info
#pragma weak dwarf_frame_register
#pragma weak dwarf_attr_integrate
#pragma weak dwarf_child
#pragma weak dwarf_diename
#pragma weak dwarf_filesrc
#pragma weak dwarf_formref_die
#pragma weak dwarf_formstring
#pragma weak dwarf_formudata
#pragma weak dwarf_getscopes
#pragma weak dwarf_getscopes_die
#pragma weak dwarf_getsrcfiles
#pragma weak dwarf_haspc
#pragma weak dwarf_hasattr
#pragma weak dwarf_siblingof
#pragma weak dwarf_srclang
#pragma weak dwarf_tag
#pragma weak dwfl_addrmodule
#pragma weak dwfl_begin
#pragma weak dwfl_build_id_find_debuginfo
#pragma weak dwfl_end
#pragma weak dwfl_getmodules
#pragma weak dwfl_lineinfo
#pragma weak dwfl_linux_proc_find_elf
#pragma weak dwfl_linux_proc_report
#pragma weak dwfl_module_addrdie
#pragma weak dwfl_module_addrinfo
#pragma weak dwfl_module_addrname
#pragma weak dwfl_module_dwarf_cfi
#pragma weak dwfl_module_eh_cfi
#pragma weak dwfl_module_getsrc
#pragma weak dwfl_module_getsym_info
#pragma weak dwfl_module_getsymtab
#pragma weak dwfl_module_info
#pragma weak dwfl_report_elf
#pragma weak dwfl_report_end
#pragma weak dwfl_standard_find_debuginfo

#include <dwarf.h>
#include <elfutils/libdw.h>
#include <elfutils/libdwfl.h>
#include <gelf.h>

/* 1 when libdw is linked into the process, 0 when only the weak
 * references are (a static link without -ldw). */
static inline int sp_libdw_present(void)
{
	return dwfl_begin != NULL && dwarf_getscopes != NULL;
}
#endif

#endif /* SP_BASE_LIBDW_H */
