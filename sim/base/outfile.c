/*
 * outfile.c -- output files written whole or not at all (outfile.h), and
 * the SIGINT/SIGTERM handlers that remove their temporary files.
 *
 * The registry of temporary files (and the handlers' owner and dispositions
 * below it) is file-static state, the one kind this module keeps, and for a
 * reason: a signal handler can reach nothing else. It is a fixed array (no
 * allocation in a handler), each slot's path written before its `used` flag
 * is set and the flag cleared after the file is renamed or removed, so the
 * handler sees either no entry or a complete one. A slot also records the
 * process that made the file: a forked child (sweep and compare points)
 * inherits the array but removes only its own files.
 */
#include "outfile.h"

#include "arch.h"

#include <errno.h>
#include <fcntl.h>
#include <libgen.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#define OUT_SLOTS 16

static struct { /* static-ok: the signal handler reads the temporaries to remove */
	char path[PATH_MAX + 16];
	pid_t pid;
	volatile sig_atomic_t used;
} reg[OUT_SLOTS];
static pid_t owner;                 /* static-ok: the process that installed the handlers */
static volatile sig_atomic_t armed; /* static-ok: out_signals_install() ran */

int out_track(const char *path)
{
	if (strlen(path) >= sizeof reg[0].path) {
		errno = ENAMETOOLONG;
		return -1;
	}
	for (int i = 0; i < OUT_SLOTS; i++) {
		if (!reg[i].used) {
			memcpy(reg[i].path, path, strlen(path) + 1);
			reg[i].pid = getpid();
			reg[i].used = 1;
			return i;
		}
	}
	errno = EMFILE;
	return -1;
}

void out_untrack(int slot)
{
	if (slot >= 0 && slot < OUT_SLOTS)
		reg[slot].used = 0;
}

static void on_signal(int sig)
{
	pid_t me = getpid();
	for (int i = 0; i < OUT_SLOTS; i++)
		if (reg[i].used && reg[i].pid == me)
			unlink(reg[i].path);
	if (me == owner) {
		static const char in[] = "sim: interrupted\n", te[] = "sim: terminated\n";
		ssize_t w = sig == SIGINT ? write(2, in, sizeof in - 1) : write(2, te, sizeof te - 1);
		(void)w;
	}
	_exit(sig == SIGINT ? 130 : 143);
}

/* SIGINT and SIGTERM: handled, or left ignored when sim started with them
   ignored (`nohup`, a script's `sim ... &`), as a background job expects. */
static const int sigs[2] = {SIGINT, SIGTERM};
static int ignored[2]; /* static-ok: dispositions at start, restored by the handlers' owner */

static void install(void)
{
	struct sigaction sa;
	memset(&sa, 0, sizeof sa);
	sigemptyset(&sa.sa_mask);
	sigaddset(&sa.sa_mask, SIGINT);
	sigaddset(&sa.sa_mask, SIGTERM);
	for (int i = 0; i < 2; i++) {
		sa.sa_handler = ignored[i] ? SIG_IGN : on_signal;
		sigaction(sigs[i], &sa, NULL);
	}
}

void out_signals_install(void)
{
	for (int i = 0; i < 2; i++) {
		struct sigaction cur;
		ignored[i] = !sigaction(sigs[i], NULL, &cur) && cur.sa_handler == SIG_IGN;
	}
	owner = getpid();
	armed = 1;
	install();
}

void out_signals_reassert(void)
{
	if (armed)
		install();
}

static void set_why(char *why, size_t len, int err, const char *msg)
{
	if (why && len)
		snprintf(why, len, "%s", msg ? msg : strerror(err));
	errno = err;
}

/* Follows symlinks from path to the file they end at (which may not exist):
   its name in dst, its lstat in *st (st_mode 0 when it does not exist). */
static int resolve(const char *path, char *dst, size_t len, struct stat *st)
{
	char cur[PATH_MAX], link[PATH_MAX];
	if (snprintf(cur, sizeof cur, "%s", path) >= (int)sizeof cur)
		return errno = ENAMETOOLONG, -1;
	for (int hops = 0;; hops++) {
		if (lstat(cur, st)) {
			if (errno != ENOENT)
				return -1;
			memset(st, 0, sizeof *st);
			break;
		}
		if (!S_ISLNK(st->st_mode))
			break;
		if (hops == 40)
			return errno = ELOOP, -1;
		ssize_t n = readlink(cur, link, sizeof link - 1);
		if (n < 0)
			return -1;
		link[n] = 0;
		if (link[0] == '/') {
			memcpy(cur, link, (size_t)n + 1);
			continue;
		}
		char *slash = strrchr(cur, '/');
		size_t dirlen = slash ? (size_t)(slash - cur) + 1 : 0; /* keeps the '/' */
		if (dirlen + (size_t)n + 1 > sizeof cur)
			return errno = ENAMETOOLONG, -1;
		memmove(cur + dirlen, link, (size_t)n + 1);
	}
	if (snprintf(dst, len, "%s", cur) >= (int)len)
		return errno = ENAMETOOLONG, -1;
	return 0;
}

FILE *out_open(const char *path, struct out_file *o, char *why, size_t len)
{
	memset(o, 0, sizeof *o);
	o->path = path;
	o->slot = -1;
	if (!strcmp(path, "-")) {
		snprintf(o->target, sizeof o->target, "-");
		return o->f = stdout;
	}
	struct stat st;
	if (resolve(path, o->target, sizeof o->target, &st)) {
		set_why(why, len, errno, NULL);
		return NULL;
	}
	if (S_ISCHR(st.st_mode) || S_ISFIFO(st.st_mode)) {
		if (!(o->f = fopen(o->target, "w")))
			set_why(why, len, errno, NULL);
		return o->f;
	}
	if (S_ISDIR(st.st_mode)) {
		set_why(why, len, EISDIR, NULL);
		return NULL;
	}
	if (st.st_mode && !S_ISREG(st.st_mode)) {
		set_why(why, len, EINVAL, "not a regular file, a character device or a FIFO");
		return NULL;
	}
	const char *slash = strrchr(o->target, '/');
	int dirlen = slash ? (int)(slash - o->target) + 1 : 0;
	if (snprintf(o->tmp, sizeof o->tmp, "%.*s.%s.XXXXXX", dirlen, o->target, o->target + dirlen) >=
	    (int)sizeof o->tmp) {
		o->tmp[0] = 0;
		set_why(why, len, ENAMETOOLONG, NULL);
		return NULL;
	}
	mode_t mode = st.st_mode & 0777; /* an existing file's permissions, not its set-id bits */
	if (!st.st_mode) {
		mode_t mask = umask(0);
		umask(mask);
		mode = 0666 & ~mask;
	}
	/* made and registered with the signals held, so that none leaves it behind */
	sigset_t hold, old;
	sigemptyset(&hold);
	sigaddset(&hold, SIGINT);
	sigaddset(&hold, SIGTERM);
	sigprocmask(SIG_BLOCK, &hold, &old);
	int fd = mkstemp(o->tmp), err = errno;
	if (fd >= 0 && (o->slot = out_track(o->tmp)) < 0) {
		err = errno;
		close(fd);
		unlink(o->tmp);
		fd = -1;
	}
	sigprocmask(SIG_SETMASK, &old, NULL);
	if (fd >= 0 && (fchmod(fd, mode) || !(o->f = fdopen(fd, "w")))) {
		err = errno;
		close(fd);
		unlink(o->tmp);
		out_untrack(o->slot);
		o->slot = -1;
		fd = -1;
	}
	if (fd < 0) {
		o->tmp[0] = 0;
		set_why(why, len, err, NULL);
		return NULL;
	}
	return o->f;
}

int out_commit(struct out_file *o, char *why, size_t len)
{
	if (!o->f)
		return 0;
	int bad = ferror(o->f), err = errno;
	if (o->f == stdout) {
		bad |= fflush(stdout) != 0 || ferror(stdout);
		o->f = NULL;
		if (bad)
			set_why(why, len, errno ? errno : EIO, NULL);
		return bad ? -1 : 0;
	}
	if (fclose(o->f))
		bad = 1, err = errno;
	o->f = NULL;
	if (!o->tmp[0]) {
		if (bad)
			set_why(why, len, err ? err : EIO, NULL);
		return bad ? -1 : 0;
	}
	if (!bad && !rename(o->tmp, o->target)) {
		out_untrack(o->slot);
		o->slot = -1;
		return 0;
	}
	err = bad ? (err ? err : EIO) : errno;
	unlink(o->tmp);
	out_untrack(o->slot);
	o->slot = -1;
	set_why(why, len, err, NULL);
	return -1;
}

void out_abort(struct out_file *o)
{
	if (!o->f)
		return;
	if (o->f != stdout)
		fclose(o->f);
	o->f = NULL;
	if (o->tmp[0]) {
		unlink(o->tmp);
		out_untrack(o->slot);
		o->slot = -1;
	}
}

int out_same_file(const char *a, const char *b)
{
	struct stat sa, sb;
	if (!a || !b || !strcmp(a, "-") || !strcmp(b, "-") || stat(a, &sa) || stat(b, &sb))
		return 0;
	return sa.st_dev == sb.st_dev && sa.st_ino == sb.st_ino;
}

/* The file path names once written: symlinks followed, its directory made
   absolute (it may not exist yet); "" when that cannot be told. */
static void canonical(const char *path, char *dst, size_t len)
{
	char t[PATH_MAX], dir[PATH_MAX];
	struct stat st;
	dst[0] = 0;
	if (resolve(path, t, sizeof t, &st))
		return;
	char *slash = strrchr(t, '/');
	const char *base = slash ? slash + 1 : t;
	if (!slash) {
		strcpy(dir, ".");
	} else if (slash == t) {
		strcpy(dir, "/");
	} else {
		memcpy(dir, t, (size_t)(slash - t));
		dir[slash - t] = 0;
	}
	char *abs = realpath(dir, NULL);
	size_t la = abs && strcmp(abs, "/") ? strlen(abs) : 0, lb = strlen(base);
	if (abs && la + lb + 2 <= len) {
		memcpy(dst, abs, la);
		dst[la] = '/';
		memcpy(dst + la + 1, base, lb + 1);
	}
	free(abs);
}

/* The directory PATH is in, as dirname(3) says ("." when it has no slash), in buf. */
static void dir_of(const char *path, char *buf, size_t len)
{
	char copy[PATH_MAX];
	snprintf(copy, sizeof copy, "%s", path);
	snprintf(buf, len, "%s", dirname(copy));
}

/* 0 when PATH is a directory this process can create files in, else -1 with errno. */
static int writable_dir(const char *path)
{
	struct stat st;
	if (stat(path, &st))
		return -1;
	if (!S_ISDIR(st.st_mode)) {
		errno = ENOTDIR;
		return -1;
	}
	return access(path, W_OK | X_OK);
}

int out_probe(const char *path, int dir)
{
	char parent[PATH_MAX];
	struct stat st;
	if (!strcmp(path, "-"))
		return 0;
	if (stat(path, &st)) { /* not there (a dangling link too): its directory must take a new file */
		if (errno != ENOENT)
			return -1;
		dir_of(path, parent, sizeof parent);
		return writable_dir(parent);
	}
	if (dir)
		return writable_dir(path);
	if (S_ISDIR(st.st_mode)) {
		errno = EISDIR;
		return -1;
	}
	if (S_ISCHR(st.st_mode) || S_ISFIFO(st.st_mode)) /* written through */
		return access(path, W_OK);
	if (!S_ISREG(st.st_mode)) {
		errno = EINVAL;
		return -1;
	}
	char target[PATH_MAX]; /* a regular file: the temporary file goes beside the link's final target */
	if (!realpath(path, target))
		return -1;
	dir_of(target, parent, sizeof parent);
	return writable_dir(parent);
}

int out_check_inputs(const char *cmd, const char *const *outs, int nouts, const char *const *ins, int nins)
{
	for (int i = 0; i < nouts; i++) {
		for (int k = i + 1; k < nouts; k++) {
			char a[PATH_MAX + 1], b[PATH_MAX + 1];
			if (!outs[i] || !outs[k] || !strcmp(outs[i], "-") || !strcmp(outs[k], "-"))
				continue;
			canonical(outs[i], a, sizeof a);
			canonical(outs[k], b, sizeof b);
			if (out_same_file(outs[i], outs[k]) || (a[0] && !strcmp(a, b))) {
				fprintf(stderr,
				        "sim %s: %s: is also the output %s; refusing to write one over the other\n",
				        cmd, outs[k], outs[i]);
				return SIM_EXIT_CANTCREAT;
			}
		}
	}
	for (int i = 0; i < nouts; i++) {
		for (int k = 0; k < nins; k++) {
			if (outs[i] && ins[k] && out_same_file(outs[i], ins[k])) {
				fprintf(stderr,
				        "sim %s: %s: is an input of this command (%s); refusing to overwrite it\n", cmd,
				        outs[i], ins[k]);
				return SIM_EXIT_CANTCREAT;
			}
		}
	}
	return 0;
}
