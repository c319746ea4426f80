/*
 * report_file.c - a rendered report written to output=FILE whole or not
 * at all: the report at exit (runtime/lifecycle.c) and the report that
 * 'syncprof run' renders for the program (tools/syncprof/run_report.c)
 * go through this one function, so both leave the same file, or say the
 * same thing when they cannot.
 *
 * Design: a partial report must never be left as if it were whole (a
 * full disk, a quota, RLIMIT_FSIZE).  The bytes, rendered in memory, are
 * written to a temporary file next to FILE ("FILE.PID.tmp") and renamed
 * over FILE once every byte is in, so FILE is either the whole new report
 * or untouched; when writing fails, the temporary file is removed.  A FILE
 * that is not a regular file (a device such as /dev/stderr, a FIFO, a
 * symbolic link) is written in place, and a regular file behind a
 * symbolic link is emptied on failure.  An existing FILE keeps its mode,
 * and is replaced only if we may write it; another hard link to it keeps
 * the old report.  No fsync: the report survives the program, not a
 * crash of the machine.  The caller says what failed (the runtime with
 * one write(2), the CLI with stdio) and where the report went instead.
 *
 * Alternatives considered: keeping this in lifecycle.c (where it was
 * until the report of 'syncprof run' moved out of the program: the CLI
 * may not use the runtime layer, and a second copy would drift).
 */
#include <errno.h>
#include <fcntl.h>
#include <linux/magic.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/statfs.h>
#include <unistd.h>

#include "report/profile.h"

static int write_all_fd(int fd, const char *p, size_t n)
{
	while (n) {
		ssize_t w = write(fd, p, n);

		if (w < 0 && errno == EINTR)
			continue;
		if (w < 0)
			return -errno;
		if (w == 0)
			return -EIO;
		p += w;
		n -= (size_t)w;
	}
	return 0;
}

/* Write @data to @fd and close it: 0 or a negative errno. */
static int write_close(int fd, const char *data, size_t len)
{
	int rc = write_all_fd(fd, data, len);

	if (close(fd) && !rc)
		rc = -errno;
	return rc;
}

/* Into a temporary file, renamed over @path: 0, or a negative errno with
 * *@created 0 when not even the temporary file could be made. */
static int report_replace(const char *path, const struct stat *old, const char *data,
			  size_t len, int *created)
{
	char tmp[4096 + 32];
	int fd = -1, rc;

	if (old && faccessat(AT_FDCWD, path, W_OK, AT_EACCESS)) {
		*created = 0; /* as open() of a file we may not write would fail */
		return -errno;
	}
	/* EEXIST: left by a killed process that had our pid; try another. */
	for (int i = 0; i < 100 && fd < 0; i++) {
		if (i)
			snprintf(tmp, sizeof(tmp), "%s.%d.%d.tmp", path, (int)getpid(), i);
		else
			snprintf(tmp, sizeof(tmp), "%s.%d.tmp", path, (int)getpid());
		fd = open(tmp, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0666);
		if (fd < 0 && errno != EEXIST)
			break;
	}
	*created = fd >= 0;
	if (fd < 0)
		return -errno;
	if (old && fchmod(fd, old->st_mode & 07777)) {
		/* the mode of a file we do not own: the report is what counts */
	}
	rc = write_close(fd, data, len);
	if (!rc && rename(tmp, path))
		rc = -errno;
	if (rc)
		unlink(tmp);
	return rc;
}

/* In place (not a regular file): 0, or a negative errno with *@created 0
 * when it could not be opened. */
static int report_in_place(const char *path, const char *data, size_t len, int *created)
{
	int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0666), rc;
	struct stat st;

	*created = fd >= 0;
	if (fd < 0)
		return -errno;
	rc = write_all_fd(fd, data, len);
	if (rc && !fstat(fd, &st) && S_ISREG(st.st_mode) && ftruncate(fd, 0)) {
		/* what it got stays: said on stderr all the same */
	}
	if (close(fd) && !rc)
		rc = -errno;
	return rc;
}

/* Whether @path (or, not there yet, its directory) is on procfs or sysfs:
 * their "regular" files are kernel interfaces, no place for a report. */
static int on_kernel_fs(const char *path)
{
	struct statfs fs;

	if (statfs(path, &fs))
		return 0;
	return fs.f_type == PROC_SUPER_MAGIC || fs.f_type == SYSFS_MAGIC;
}

const char *sp_report_file_error(const char *path, int rc)
{
	if (rc == -EINVAL && on_kernel_fs(path))
		return "a file of /proc or /sys, where no report can go";
	return strerror(-rc);
}

int sp_report_file_write(const char *path, const char *data, size_t len, int *created)
{
	struct stat st;

	if (on_kernel_fs(path)) {
		*created = 0;
		return -EINVAL;
	}
	int exists = !lstat(path, &st);
	int regular = exists ? S_ISREG(st.st_mode) : errno == ENOENT;

	if (regular)
		return report_replace(path, exists ? &st : NULL, data, len, created);
	return report_in_place(path, data, len, created);
}

int sp_write_all(int fd, const char *data, size_t len)
{
	return write_all_fd(fd, data, len);
}
