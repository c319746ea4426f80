/*
 * ranges.c - the code ranges a call site steps over, as the probes read
 * them (record.h, sp_pc_skipped()): the --skip wrappers' and libc's lock
 * wrappers', filled once at start-up by stack.c and published with
 * sp_skip_n; and the generation of sites, bumped (release) by whoever
 * adds code a site may step over - the lock libraries found later by
 * locklib.c - so that the threads' caches of sites already checked
 * (sp_site_ok[]) start again.  Defined here, below both writers, which
 * otherwise call nothing of each other's but the lock libraries' lookup.
 */
#include "record.h"

struct sp_range sp_skip_ranges[SP_MAX_RANGES] SP_LARGE;
unsigned sp_skip_n;
uintptr_t sp_site_gen;
