/*
 * cli.h - shared pieces of the syncprof command-line tool.
 *
 * Each subcommand lives in its own file (cmd_NAME.c) and has the signature
 * of cli_cmd_fn: it gets argv starting at its own name and returns the
 * process exit status: 0 success, 1 failure, 2 usage error.  Errors are
 * printed once, through cli_error(), as "syncprof NAME: message".
 */
#ifndef SYNCPROF_CLI_H
#define SYNCPROF_CLI_H

typedef int (*cli_cmd_fn)(int argc, char **argv);

int cmd_run(int argc, char **argv);
int cmd_report(int argc, char **argv);
int cmd_ctl(int argc, char **argv);
int cmd_trace(int argc, char **argv);

/* Print "syncprof CMD: " + printf-style message + newline to stderr. */
void cli_error(const char *cmd, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

/* elf_symbols.c: the function containing file offset @file_off of the ELF
 * file at @path (absolute), and the offset into it; NULL when unknown. */
#include <stdint.h>
const char *cli_elf_symbol(const char *path, uint64_t file_off, uint64_t *sym_off);

#endif
