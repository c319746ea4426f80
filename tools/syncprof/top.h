/*
 * top.h - 'syncprof top': the snapshots, their rates and the screen
 * (top_view.c), driven by the command line, terminal and keys of
 * cmd_top.c.  Private to those two files.
 */
#ifndef SYNCPROF_TOP_H
#define SYNCPROF_TOP_H

#include <stdint.h>
#include <stdio.h>
#include <sys/types.h>

/* Sort keys: the rate now first (top's default is what is busy now), then
 * those of 'syncprof report -s'. */
enum top_sort {
	TOP_SORT_RATE,      /* wait time per second since the previous refresh */
	TOP_SORT_TOTAL,     /* total wait */
	TOP_SORT_COUNT,     /* acquisitions */
	TOP_SORT_CONTENDED, /* waits */
	TOP_SORT_AVG,       /* wait per acquisition */
	TOP_SORT_MAX,       /* longest wait */
	TOP_SORT_HOLD,      /* total hold (hold tracking) */
	TOP_SORT_N
};
extern const char *const top_sort_names[TOP_SORT_N];
/* The key named @s, or -1. */
int top_sort_parse(const char *s);

/* One row of the process's report, with its rates. */
struct top_row {
	char *key;          /* type, object and site: the same row at the next refresh */
	char *site;         /* as shown */
	char object[32];    /* as shown: name, address or "N locks" */
	int type;           /* enum sp_type */
	uint64_t acq, waits, wait_ns, max_ns, hold_ns;
	int hold_known;
	double acq_rate;    /* acquisitions per second over the snapshot's span */
	double wait_rate;   /* contended waits per second */
	double wait_share;  /* ns waited per ns: 1.0 = one thread waited throughout */
};

/* The process at one refresh: its status and every row of its report. */
struct top_snap {
	int pid;
	char *command;
	char profiling[8];  /* "on", "off", "?" */
	char threads[16];
	int hold;           /* hold tracking is on */
	int coalesced;
	uint64_t elapsed_ns; /* profiled time since start-up or the last reset */
	size_t rows_total;
	struct top_row *rows;
	size_t n;
	/* set by top_rates(): the profiled time the rates are over; since
	 * start-up or the last reset when @since_start */
	uint64_t span_ns;
	int since_start;
};

/*
 * top_fetch() - ask @pid for its status and its whole report (JSON, every
 * row; objects coalesced as the process's options say, or as @coalesce
 * when it is 0 or 1) into @s.  Return 0 (free @s with top_snap_free()),
 * or a negative errno with one message in @err (cli_ctl_request()'s, or
 * the report's parse error: -EINVAL).
 */
int top_fetch(pid_t pid, int coalesce, struct top_snap *s, char *err, size_t esize);
void top_snap_free(struct top_snap *s);
/* Rates of @cur since @prev (NULL: since start-up or the last reset, as
 * when the process was reset in between).  Reorders @prev's rows. */
void top_rates(struct top_snap *cur, struct top_snap *prev);
/* Sort @s's rows by @key; unless @merged, the rows of locks first
 * (sp_type_is_lock()), then the waits for an event, each by @key. */
void top_sort(struct top_snap *s, enum top_sort key, int merged);

/* How to draw a snapshot. */
struct top_screen {
	unsigned width;      /* columns; 0: no limit (batch output) */
	unsigned height;     /* lines; 0: no limit */
	unsigned max_rows;   /* rows shown at most; 0: as many as fit */
	enum top_sort sort;
	double interval;     /* seconds between refreshes */
	int tty;             /* ANSI escapes: home, clear, reverse video */
	int paused;
	int help;            /* the keys instead of the rows */
	int merged;          /* one list; else the locks' rows, then the waits for an
			      * event, each part under a title line (top_sort()) */
	const char *message; /* one line under the header, or NULL */
};
/* Draw @s (NULL: nothing fetched yet) as @v says, into @out. */
void top_draw(FILE *out, const struct top_snap *s, const struct top_screen *v);

#endif
