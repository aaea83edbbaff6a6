/*
 * outfile.h -- output files written whole or not at all, without touching
 * what is not ours: the one way every command writes a file.
 *
 * out_open() picks how PATH is written:
 *   "-"                     stdout, written in place (not closed)
 *   a character device/FIFO written through directly (no temporary file:
 *                           /dev/null stays a device, a FIFO a FIFO)
 *   a symlink               followed: its final target is written as below
 *                           and the link stays a link
 *   a regular file, or none a temporary ".NAME.XXXXXX" (mkstemp: O_EXCL, an
 *                           unpredictable name) in the target's directory,
 *                           renamed onto the target by out_commit() (atomic:
 *                           one filesystem); an existing file's permissions
 *                           are kept, a new one gets 0666 less the umask
 *   anything else           refused (a directory: EISDIR; a socket or block
 *                           device: EINVAL), nothing created
 * Invariants: a temporary file exists only between out_open() and
 * out_commit()/out_abort(), and while it exists it is in the registry that
 * the SIGINT/SIGTERM handlers of out_signals_install() unlink; the target is
 * replaced only by a complete file whose every write and close succeeded.
 */
#ifndef SIM_OUTFILE_H
#define SIM_OUTFILE_H

#include <limits.h>
#include <stddef.h>
#include <stdio.h>

#ifndef PATH_MAX
#define PATH_MAX 4096
#endif

struct out_file {
	const char *path;        /* as given */
	char target[PATH_MAX];   /* the file that gets the output (symlinks followed) */
	char tmp[PATH_MAX + 16]; /* the temporary file; "" when written in place */
	FILE *f;                 /* NULL when not open */
	int slot;                /* registry slot of tmp, -1 if none */
};

/* Opens PATH for writing as above; NULL with errno set and a reason
   ("Is a directory", ...) in why[0..len) on failure. */
FILE *out_open(const char *path, struct out_file *o, char *why, size_t len);

/* Flushes and closes, then renames the temporary file onto the target. 0, or
   -1 with errno and why set (the temporary file is removed, the target left
   as it was). A no-op returning 0 when o is not open. */
int out_commit(struct out_file *o, char *why, size_t len);

/* Closes and removes the temporary file; the target is left as it was. A
   no-op when o is not open. */
void out_abort(struct out_file *o);

/* 1 when a and b name the same existing file (st_dev, st_ino, symlinks
   followed); 0 otherwise, and for "-". */
int out_same_file(const char *a, const char *b);

/* Checks the outputs against each other ("sim CMD: OUTPUT: is also the
   output OTHER; refusing to write one over the other", also for a file that
   does not exist yet) and against every input ("sim CMD: OUTPUT: is an input
   of this command (INPUT); refusing to overwrite it"); NULL entries and "-"
   are skipped. 0, or SIM_EXIT_CANTCREAT after that one line on stderr.
   Called before any work. */
int out_check_inputs(const char *cmd, const char *const *outs, int nouts, const char *const *ins, int nins);

/* Whether PATH could be written now, as out_open() would (or, with dir, used as an output directory, created if
   its parent is there), so that a command finds a bad output path before its work rather than after: 0, or -1
   with errno set (ENOENT: the directory it goes in is missing; EISDIR, ENOTDIR, EACCES, EINVAL). "-" is 0.
   Writes nothing. */
int out_probe(const char *path, int dir);

/* Registers a temporary file of this process that a SIGINT/SIGTERM must
   remove (out_open() does it for its own); returns the slot, or -1 with
   errno EMFILE when the registry is full. out_untrack() forgets it. */
int out_track(const char *path);
void out_untrack(int slot);

/* Installs the SIGINT/SIGTERM handlers (sigaction): remove this process's
   registered temporary files, write "sim: interrupted" / "sim: terminated"
   on stderr (the process that installed them only; its forked children stay
   quiet) and _exit(130) / _exit(143). A signal ignored when sim starts
   (nohup, a script's background job) stays ignored. Called once from main(). */
void out_signals_install(void);

/* Installs them again when out_signals_install() ran: SimGrid's
   simgrid_init() sets its own SIGINT handler (it prints the actors' status
   and exit(1)s), so the replay calls this after creating the engine. */
void out_signals_reassert(void);

#endif
