/*
 * test_trace_reader - bad input: truncated, corrupt and foreign files.
 *
 * A real trace is written, then read back cut at every length: every
 * record that ends before the cut is returned, and reading stops with
 * TRUNCATED exactly when the cut falls inside a record.  Then targeted
 * corruptions (magic, version, header, record sizes and types, argument
 * counts, unterminated strings) must each stop the reader with CORRUPT and
 * a message, an optional record type of a later version must be skipped,
 * and random damage must never crash or hang it.  Finally the CLI on such
 * files: exit 3 and one line saying where for a truncated file, exit 1 for
 * a corrupt or foreign one, and the records before the damage printed.
 *
 * Usage: test_trace_reader [SYNCPROF_CLI]
 */
#include <sys/wait.h>

#include "trace_util.h"

static uint64_t *ends; /* end offset of every record */
static size_t n_ends;

static void note_end(const struct sp_trace_reader *r, const struct sp_trace_rec *rec, void *arg)
{
	(void)r, (void)arg;
	ends[n_ends++] = rec->off + rec->size;
}

static void write_file(const char *path, const uint8_t *p, size_t n)
{
	FILE *f = fopen(path, "wb");

	T_ASSERT(f);
	T_ASSERT_UINT(fwrite(p, 1, n, f), ==, n);
	T_ASSERT_INT(fclose(f), ==, 0);
}

static int run_cli(const char *cli, const char *args, const char *path, const char *out)
{
	char cmd[2048];
	int st;

	snprintf(cmd, sizeof(cmd), "%s %s %s >%s.out 2>%s", cli, args, path, out, out);
	st = system(cmd);
	T_ASSERT(WIFEXITED(st));
	return WEXITSTATUS(st);
}

static void expect_in_file(const char *path, const char *needle)
{
	char *text = t_slurp_file(path);

	T_ASSERT_CONTAINS(text, needle);
	free(text);
}

/* Corrupt a copy of @good at @off with @n bytes of @bytes; expect CORRUPT. */
static void expect_corrupt(const uint8_t *good, size_t size, size_t off, const void *bytes,
			   size_t n, const char *what)
{
	uint8_t *p = malloc(size);
	int st;

	T_ASSERT(p);
	memcpy(p, good, size);
	memcpy(p + off, bytes, n);
	st = t_trace_read_mem(p, size, NULL, NULL, NULL, NULL);
	if (st != SP_TRACE_READ_CORRUPT && st != -SP_TRACE_READ_CORRUPT)
		T_FAIL("%s: status %d, expected corrupt", what, st);
	free(p);
}

int main(int argc, char **argv)
{
	static const char *const args[] = { "a", "b", "c" };
	char dir[256], path[512], cut[512], bad[600], out[512];
	uint8_t *data, *p;
	size_t size, first_rec, ev_off = 0;
	uint64_t records;
	int id, st;

	t_tmpdir(dir, sizeof(dir), "reader");
	snprintf(path, sizeof(path), "%s/good.trace", dir);
	id = syncprof_trace_register("reader_ev", args, 3);
	T_ASSERT_INT(syncprof_trace_open(path), ==, 0);
	for (uint64_t i = 0; i < 200; i++)
		SYNCPROF_TRACE(id, i, i * 2, i * 3);
	T_ASSERT_INT(syncprof_trace_close(), ==, 0);

	data = t_read_all(path, &size);
	ends = calloc(size / 8 + 1, sizeof(*ends));
	T_ASSERT_INT(t_trace_read_mem(data, size, note_end, NULL, &records, NULL), ==,
		     SP_TRACE_READ_OK);
	T_ASSERT_UINT(records, ==, n_ends);
	T_ASSERT_UINT(ends[n_ends - 1], ==, size);
	first_rec = SP_TRACE_HEADER_SIZE;

	/* Every cut: complete records returned, TRUNCATED inside a record. */
	for (size_t len = 0, k = 0; len <= size; len += len < 4096 || size - len < 4096 ? 1 : 61) {
		uint64_t got = 0;

		while (k < n_ends && ends[k] <= len)
			k++;
		st = t_trace_read_mem(data, len, NULL, NULL, &got, NULL);
		if (len < SP_TRACE_HEADER_SIZE) {
			T_ASSERT_INT(st, ==, len ? -SP_TRACE_READ_TRUNCATED : -SP_TRACE_READ_CORRUPT);
			continue;
		}
		T_ASSERT_UINT(got, ==, k);
		T_ASSERT_INT(st, ==, (len == SP_TRACE_HEADER_SIZE || (k && ends[k - 1] == len))
					     ? SP_TRACE_READ_OK
					     : SP_TRACE_READ_TRUNCATED);
	}

	/* Targeted corruption. */
	{
		uint32_t v2 = 2, zero32 = 0, hs = 12, big = 0x80000000u, odd = 12;
		uint64_t zero64 = 0;
		uint16_t type9 = 9, type0 = 0, nargs7 = 7;
		struct sp_trace_rec_header opt = { 100, 0, 16 };

		expect_corrupt(data, size, 0, "NOTATRACE", 8, "magic");
		expect_corrupt(data, size, 8, &v2, 4, "version");
		expect_corrupt(data, size, 12, &hs, 4, "header size");
		expect_corrupt(data, size, 20, &zero32, 4, "clock");
		expect_corrupt(data, size, 24, &zero64, 8, "ticks per second");
		expect_corrupt(data, size, first_rec + 4, &zero32, 4, "record size 0");
		expect_corrupt(data, size, first_rec + 4, &odd, 4, "record size 12");
		expect_corrupt(data, size, first_rec + 4, &big, 4, "record size 2 GiB");
		expect_corrupt(data, size, first_rec, &type9, 2, "unknown type");
		expect_corrupt(data, size, first_rec, &type0, 2, "type 0");
		/* the first EVENT record: 7 arguments */
		for (size_t k = 0; k < n_ends; k++) {
			uint16_t type;

			memcpy(&type, data + (k ? ends[k - 1] : first_rec), 2);
			if (type == SP_REC_EVENT) {
				ev_off = k ? ends[k - 1] : first_rec;
				break;
			}
		}
		T_ASSERT(ev_off);
		expect_corrupt(data, size, ev_off + 2, &nargs7, 2, "7 arguments");
		/* the first record is an EVENT_DEF: fill its strings with 'x' */
		p = malloc(size);
		memcpy(p, data, size);
		memset(p + first_rec + 16, 'x', ends[0] - first_rec - 16);
		st = t_trace_read_mem(p, size, NULL, NULL, NULL, NULL);
		T_ASSERT_INT(st, ==, SP_TRACE_READ_CORRUPT);
		/* an optional record of a later version is skipped */
		memcpy(p, data, size);
		p = realloc(p, size + 16);
		memcpy(p + size, &opt, sizeof(opt));
		memset(p + size + 8, 0, 8);
		T_ASSERT_INT(t_trace_read_mem(p, size + 16, NULL, NULL, &records, NULL), ==,
			     SP_TRACE_READ_OK);
		T_ASSERT_UINT(records, ==, n_ends + 1);
		free(p);
	}

	/* Random damage: any status, never a crash or a hang. */
	srand(12345);
	p = malloc(size);
	for (int i = 0; i < 3000; i++) {
		memcpy(p, data, size);
		for (int j = 0; j < 1 + rand() % 8; j++)
			p[(size_t)rand() % size] = (uint8_t)rand();
		t_trace_read_mem(p, size, NULL, NULL, NULL, NULL);
	}
	free(p);

	if (argc > 1) {
		/* truncated inside the last record */
		snprintf(cut, sizeof(cut), "%s/cut.trace", dir);
		write_file(cut, data, size - 5);
		snprintf(out, sizeof(out), "%s/cut", dir);
		T_ASSERT_INT(run_cli(argv[1], "trace dump", cut, out), ==, 3);
		expect_in_file(out, "is incomplete");
		expect_in_file(out, "the file ends inside a record");
		snprintf(bad, sizeof(bad), "%s.out", out);
		expect_in_file(bad, "reader_ev a=198 b=396 c=594");
		T_ASSERT_INT(run_cli(argv[1], "trace stats", cut, out), ==, 3);
		T_ASSERT_INT(run_cli(argv[1], "trace export --format chrome -o /dev/null", cut, out),
			     ==, 3);
		/* corrupt */
		p = malloc(size);
		memcpy(p, data, size);
		memset(p + ev_off + 4, 0xff, 4);
		write_file(cut, p, size);
		free(p);
		T_ASSERT_INT(run_cli(argv[1], "trace dump --json", cut, out), ==, 1);
		expect_in_file(out, "is corrupt");
		/* foreign */
		{
			static const char foreign[] =
				"hello, this is not a trace file at all, but it is long enough\n"
				"to hold a header: 64 bytes and more, more, more, more, more\n";

			write_file(cut, (const uint8_t *)foreign, sizeof(foreign) - 1);
		}
		T_ASSERT_INT(run_cli(argv[1], "trace dump", cut, out), ==, 1);
		expect_in_file(out, "not a syncprof trace file");
		T_ASSERT_INT(run_cli(argv[1], "trace stats", "/nonexistent", out), ==, 1);
		T_ASSERT_INT(run_cli(argv[1], "trace dump --help", "", out), ==, 0);
		T_ASSERT_INT(run_cli(argv[1], "trace stats --help", "", out), ==, 0);
		T_ASSERT_INT(run_cli(argv[1], "trace export --help", "", out), ==, 0);
		T_ASSERT_INT(run_cli(argv[1], "trace --help", "", out), ==, 0);
		T_ASSERT_INT(run_cli(argv[1], "trace export --format xml -o x", path, out), ==, 2);
		T_ASSERT_INT(run_cli(argv[1], "trace frob", path, out), ==, 2);
		unlink(cut);
		unlink(out);
		unlink(bad);
	}
	free(data);
	free(ends);
	unlink(path);
	rmdir(dir);
	return 0;
}
