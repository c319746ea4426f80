/*
 * trace_load.c - a trace file read whole (every 'syncprof trace'
 * command), and modelled for 'trace what-if' and 'trace chains'
 * (trace_load.h).  Those two need the whole trace: a truncated or corrupt
 * file, or one whose writer lost events (a full disk), is refused rather
 * than analysed wrongly.
 */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "cli.h"
#include "trace_load.h"

#include "base/types.h"
#include "report/render/text.h"

void cli_trace_release(struct cli_trace *a)
{
	if (a->have_model)
		sp_trace_model_free(&a->m);
	sp_trace_reader_fini(&a->r);
	free(a->data);
}

int cli_read_whole(const char *cmd, const char *path, uint8_t **data, size_t *size)
{
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	struct stat st;
	size_t n = 0;

	*data = NULL;
	*size = 0;
	if (fd < 0 || fstat(fd, &st)) {
		cli_error(cmd, "cannot open '%s': %s", path, strerror(errno));
		if (fd >= 0)
			close(fd);
		return -1;
	}
	*data = malloc(st.st_size > 0 ? (size_t)st.st_size : 1);
	if (!*data) {
		cli_error(cmd, "'%s': out of memory", path);
		close(fd);
		return -1;
	}
	while (n < (size_t)st.st_size) {
		ssize_t got = read(fd, *data + n, (size_t)st.st_size - n);

		if (got < 0 && errno == EINTR)
			continue;
		if (got < 0) {
			cli_error(cmd, "cannot read '%s': %s", path, strerror(errno));
			close(fd);
			free(*data);
			*data = NULL;
			return -1;
		}
		if (got == 0)
			break; /* shorter than it was: what was read */
		n += (size_t)got;
	}
	close(fd);
	*size = n;
	return 0;
}

int cli_trace_load(struct cli_trace *a)
{
	if (cli_read_whole(a->cmd, a->path, &a->data, &a->size))
		return 1;
	if (sp_trace_reader_init(&a->r, a->data, a->size)) {
		cli_error(a->cmd, "'%s': %s", a->path, a->r.error);
		return 1;
	}
	if (sp_trace_model_build(&a->m, &a->r)) {
		a->have_model = 1;
		cli_error(a->cmd, "'%s': %s", a->path, a->m.error);
		return 1;
	}
	a->have_model = 1;
	if (a->m.read_status == SP_TRACE_READ_TRUNCATED) {
		cli_error(a->cmd, "'%s' is incomplete: %s; analysing needs the whole trace",
			  a->path, a->r.error);
		return EXIT_TRUNCATED;
	}
	if (a->m.read_status == SP_TRACE_READ_CORRUPT) {
		cli_error(a->cmd, "'%s' is corrupt: %s", a->path, a->r.error);
		return 1;
	}
	if (a->m.write_lost) {
		int werr = sp_trace_reader_write_error(&a->r);

		cli_error(a->cmd, "'%s' is incomplete: writing it failed (%s); analysing needs the "
			  "whole trace", a->path, werr ? strerror(werr) : "a write-loss record");
		return EXIT_TRUNCATED;
	}
	if (a->m.out_of_range) {
		cli_error(a->cmd, "'%s' is corrupt: %" PRIu64 " lock events have a time or a wait "
			  "beyond 19 hours", a->path, a->m.out_of_range);
		return 1;
	}
	if (!a->m.n_threads) {
		cli_error(a->cmd, "'%s' holds no lock events: nothing to analyse", a->path);
		return 1;
	}
	if (sp_tm_name_sites(&a->m, &a->r)) {
		cli_error(a->cmd, "'%s': out of memory naming call sites", a->path);
		return 1;
	}
	return 0;
}

double cli_ms(int64_t ns)
{
	return (double)ns / 1e6;
}

const char *cli_lock_type(int type)
{
	return type == SP_TYPE_RWLOCK_READ || type == SP_TYPE_RWLOCK_WRITE ? "rwlock"
									   : sp_type_name(type);
}

const char *cli_lock_label(const struct sp_tm_lock *l, char *buf, size_t size)
{
	if (l->name)
		snprintf(buf, size, "0x%" PRIx64 " \"%s\"", l->obj, l->name);
	else
		snprintf(buf, size, "0x%" PRIx64, l->obj);
	return buf;
}

void cli_json_lock_name(const struct sp_tm_lock *l)
{
	if (!l->name)
		return;
	printf(",\"name\":");
	sp_json_string(stdout, l->name);
}

int cli_parse_top(const char *cmd, const char *v, unsigned *top)
{
	char *end;
	unsigned long n = strtoul(v, &end, 10);

	if (!*v || *end || n == 0 || n > 1000000 || v[0] == '-') {
		cli_error(cmd, "--top wants a number from 1 to 1000000, not '%s'", v);
		return -1;
	}
	*top = (unsigned)n;
	return 0;
}

int cli_take_file(const char *cmd, const char *arg, const char **path)
{
	if (arg[0] == '-' && arg[1]) {
		cli_error(cmd, "unknown option '%s' (see --help)", arg);
		return -1;
	}
	if (*path) {
		cli_error(cmd, "one FILE only (see --help)");
		return -1;
	}
	*path = arg;
	return 0;
}
