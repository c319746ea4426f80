/*
 * cmd_trace_chains.c - 'syncprof trace chains': option parsing and
 * output.  The analysis is in the offline layer (src/analyse/chains.c, on
 * trace_model.c's model); a trace whose threads dropped events is
 * analysed with a note (a chain it shows did stand, it may miss some).
 */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <string.h>

#include "cli.h"
#include "trace_load.h"

#include "analyse/trace_model.h"
#include "report/render/text.h"

const char cli_chains_usage[] =
	"Usage: syncprof trace chains FILE [--json] [--top N]\n"
	"\n"
	"From FILE, offline: the wait chains - a thread waits for a lock whose holder\n"
	"is itself waiting for a lock, and so on to the root holder - with each\n"
	"link's waiting site and the site where the holder took the lock, by the time\n"
	"the whole chain stood (a cycle is a deadlock); then per lock, who made whom\n"
	"wait: each waiting thread's wait split by the thread that held the lock\n"
	"meanwhile, with the number of that thread's holds it overlapped ('hand-off':\n"
	"nobody held it, the waiter was being woken; the number of waits).\n"
	"Works on contended-only and full traces (holds come from releases' hold\n"
	"times or from acquisitions).  --top N: chains and locks shown (default 20).\n"
	"--json prints one object instead.\n"
	"Exit status: 0 done; 1 error (not a trace, corrupt); 2 usage; 3 incomplete\n"
	"file.\n";

static void thread_label(const struct sp_trace_model *m, uint32_t t, char *buf, size_t size)
{
	if (t == UINT32_MAX)
		snprintf(buf, size, "(hand-off)");
	else if (m->threads[t].name[0])
		snprintf(buf, size, "%u %s", m->threads[t].tid, m->threads[t].name);
	else
		snprintf(buf, size, "%u", m->threads[t].tid);
}

static void chains_text(const struct cli_trace *a, const struct sp_chains *c, unsigned top)
{
	const struct sp_trace_model *m = &a->m;
	char wb[64], hb[64], lb[128];
	size_t locks_shown = 0;
	uint32_t cur = UINT32_MAX;

	if (m->dropped)
		printf("note: %" PRIu64 " events were dropped (buffers full): chains and waits in "
		       "the lost spans are missing\n\n",
		       m->dropped);
	printf("wait chains (a waiter whose lock's holder waits too), by time the whole chain "
	       "stood: %zu\n",
	       c->n_chains);
	for (size_t i = 0; i < c->n_chains && i < top; i++) {
		const struct sp_chain *ch = &c->chains[i];

		printf("\n%10.3f ms, %" PRIu64 " times%s\n", cli_ms(ch->ns), ch->count,
		       ch->cycle ? "  DEADLOCK CYCLE" : "");
		for (unsigned k = 0; k < ch->n; k++) {
			const struct sp_chain_link *l = &ch->link[k];

			thread_label(m, l->waiter, wb, sizeof(wb));
			thread_label(m, l->holder, hb, sizeof(hb));
			printf("  %s waits at %s for %s (%s), held by %s since %s%s\n",
			       wb, m->sites[l->site].name,
			       cli_lock_label(&m->locks[l->lock], lb, sizeof(lb)),
			       cli_lock_type(m->locks[l->lock].type), hb, m->sites[l->hold_site].name,
			       k + 1 < ch->n ? ","
			       : ch->cycle   ? " (a waiter above)"
					     : " (root, running)");
		}
	}
	if (c->n_chains > top)
		printf("\n(%zu more chains)\n", c->n_chains - top);
	printf("\nwho made whom wait, per lock (ms; hand-off: nobody held it, the waiter was being "
	       "woken):\n");
	for (size_t i = 0; i < c->n_cells; i++) {
		const struct sp_blame_cell *e = &c->cells[i];

		if (e->lock != cur) {
			if (locks_shown == top)
				break;
			cur = e->lock;
			locks_shown++;
			printf("\nlock %s (%s, first taken at %s): %.3f ms waited\n",
			       cli_lock_label(&m->locks[cur], lb, sizeof(lb)),
			       cli_lock_type(m->locks[cur].type),
			       m->sites[m->locks[cur].site].name, cli_ms(c->lock_wait[cur]));
			printf("  %-24s %-24s %12s %10s\n", "waiter", "holder", "wait", "holds");
		}
		thread_label(m, e->waiter, wb, sizeof(wb));
		thread_label(m, e->holder, hb, sizeof(hb));
		printf("  %-24.24s %-24.24s %12.3f %10" PRIu64 "\n", wb, hb, cli_ms(e->ns), e->count);
	}
	if (!c->n_cells)
		printf("  (no waits on locks in the trace)\n");
}

static void json_thread(const struct sp_trace_model *m, const char *key, uint32_t t)
{
	printf("\"%s_tid\":", key);
	if (t == UINT32_MAX) {
		printf("null,\"%s\":null", key);
		return;
	}
	printf("%u,\"%s\":", m->threads[t].tid, key);
	sp_json_string(stdout, m->threads[t].name);
}

static void chains_json(const struct cli_trace *a, const struct sp_chains *c, unsigned top)
{
	const struct sp_trace_model *m = &a->m;
	uint32_t cur = UINT32_MAX;
	size_t locks_shown = 0;

	printf("{\"format\":\"syncprof-chains\",\"version\":1,\"trace\":");
	sp_json_string(stdout, a->path);
	printf(",\"dropped\":%" PRIu64 ",\"waits\":%" PRIu64 ",\"chains\":[", m->dropped, c->waits);
	for (size_t i = 0; i < c->n_chains && i < top; i++) {
		const struct sp_chain *ch = &c->chains[i];

		printf("%s{\"wait_ns\":%" PRId64 ",\"count\":%" PRIu64 ",\"cycle\":%s,\"links\":[",
		       i ? "," : "", ch->ns, ch->count, ch->cycle ? "true" : "false");
		for (unsigned k = 0; k < ch->n; k++) {
			const struct sp_chain_link *l = &ch->link[k];

			printf("%s{", k ? "," : "");
			json_thread(m, "waiter", l->waiter);
			printf(",\"object\":\"0x%" PRIx64 "\"", m->locks[l->lock].obj);
			cli_json_lock_name(&m->locks[l->lock]);
			printf(",\"site\":");
			sp_json_string(stdout, m->sites[l->site].name);
			putchar(',');
			json_thread(m, "holder", l->holder);
			printf(",\"hold_site\":");
			sp_json_string(stdout, m->sites[l->hold_site].name);
			putchar('}');
		}
		printf("]}");
	}
	printf("],\"per_lock\":[");
	for (size_t i = 0; i < c->n_cells; i++) {
		const struct sp_blame_cell *e = &c->cells[i];

		if (e->lock != cur) {
			if (locks_shown == top)
				break;
			if (cur != UINT32_MAX)
				printf("]},");
			cur = e->lock;
			locks_shown++;
			printf("{\"object\":\"0x%" PRIx64 "\"", m->locks[cur].obj);
			cli_json_lock_name(&m->locks[cur]);
			printf(",\"type\":");
			sp_json_string(stdout, cli_lock_type(m->locks[cur].type));
			printf(",\"site\":");
			sp_json_string(stdout, m->sites[m->locks[cur].site].name);
			printf(",\"wait_ns\":%" PRId64 ",\"matrix\":[", c->lock_wait[cur]);
		} else {
			putchar(',');
		}
		putchar('{');
		json_thread(m, "waiter", e->waiter);
		putchar(',');
		json_thread(m, "holder", e->holder);
		printf(",\"wait_ns\":%" PRId64 ",\"count\":%" PRIu64 "}", e->ns, e->count);
	}
	if (cur != UINT32_MAX)
		printf("]}");
	printf("]}\n");
}

int cmd_trace_chains(int argc, char **argv)
{
	const char *cmd = "trace chains", *path = NULL;
	struct cli_trace a = { .cmd = cmd };
	struct sp_chains c;
	unsigned top = 20;
	int json = 0, rc;

	for (int i = 1; i < argc; i++) {
		if (!strcmp(argv[i], "--help") || !strcmp(argv[i], "-h")) {
			fputs(cli_chains_usage, stdout);
			return 0;
		} else if (!strcmp(argv[i], "--json")) {
			json = 1;
		} else if (!strcmp(argv[i], "--top")) {
			if (i + 1 == argc) {
				cli_error(cmd, "--top needs a value (see --help)");
				return 2;
			}
			if (cli_parse_top(cmd, argv[++i], &top))
				return 2;
		} else if (!strncmp(argv[i], "--top=", 6)) {
			if (cli_parse_top(cmd, argv[i] + 6, &top))
				return 2;
		} else if (cli_take_file(cmd, argv[i], &path)) {
			return 2;
		}
	}
	if (!path) {
		cli_error(cmd, "FILE is needed (see --help)");
		return 2;
	}
	a.path = path;
	rc = cli_trace_load(&a);
	if (rc)
		goto out;
	if (sp_chains_run(&a.m, &c)) {
		cli_error(cmd, "'%s': out of memory", path);
		rc = 1;
		goto out;
	}
	if (json)
		chains_json(&a, &c, top);
	else
		chains_text(&a, &c, top);
	sp_chains_free(&c);
	if (fflush(stdout)) {
		cli_error(cmd, "writing the output failed: %s", strerror(errno));
		rc = 1;
	}
out:
	cli_trace_release(&a);
	return rc;
}
