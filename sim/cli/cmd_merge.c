/*
 * cmd_merge.c -- `sim merge SHARD.csv... [-o FILE.csv] [--plot FILE.svg]`: joins the CSVs of a
 * sweep run as shards (`sim sweep --shard I/N`, one per process, node or
 * batch job) into the CSV the sweep writes in one process, byte for byte.
 * The shards of a plan (`sim plan --shard I/N`, told by their first line)
 * are joined by cli_plan_merge (cmd_plan.c): their replays are ranked again.
 *
 * A shard file is the line SWEEP_SHARD_LINE "I/N of P points, sweep ID" (ID
 * a fingerprint of the sweep's config, workload, keys and values), the sweep's
 * header led by a column `point`, then its rows (points I, I+N, ... below
 * P, in that order) each led by its grid index. The merge checks that the N
 * files are shards 0..N-1 of one sweep (same N, P, ID and header), that each
 * holds exactly its points, and writes the header and every row without
 * the point column in grid order. A field may be quoted and hold commas or
 * line breaks (csv_put_field, sim/base/csv.c): records are read as CSV, not as
 * lines.
 */
#include "cli.h"
#include "outfile.h"
#include "plan.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

const char cmd_merge_help[] =
    "usage: sim merge SHARD.csv... [-o FILE.csv] [--plot FILE.svg]\n"
    "\n"
    "Joins the CSV files of a sweep run in shards (`sim sweep ... --shard I/N\n"
    "-o shard_I.csv` for I = 0 .. N-1: one per process, node or batch job) into\n"
    "the CSV that `sim sweep` writes in one process, byte for byte: its header\n"
    "and every point's row in grid order, without the shards' point column.\n"
    "The files may come in any order; all N shards of one sweep must be there.\n"
    "\n"
    "The shards of a plan (`sim plan ... --shard I/N --csv shard_I.csv`) are\n"
    "joined into the CSV `sim plan ... --csv` writes in one process, byte for\n"
    "byte: the layouts are listed again from the arguments the shards keep\n"
    "(the config must be where it was, unchanged), each replay's results put\n"
    "in, and the whole ranked; --plot FILE.svg also draws the plan's Pareto plot\n"
    "(as `sim plan ... --plot` does).\n"
    "\n"
    "options:\n"
    "  -o FILE.csv      write to FILE (whole or not at all; default: stdout)\n"
    "  --plot FILE.svg  a plan's shards: its Pareto plot too\n"
    "\n"
    "exit codes: 0 ok, 2 usage, 65 a file that is not a shard of the same sweep\n"
    "or plan as the others (its line and what was expected), a shard missing or\n"
    "given twice, a plan whose config changed since its shards ran, 66 a file\n"
    "(or a plan's config) cannot be read, 73 the output cannot be written or is\n"
    "one of the shards, 78 a plan's config is bad.\n"
    "\n"
    "examples:\n"
    "  sim sweep configs/h100.cfg --op 'gemm m=4096 n=4096 k=4096 dtype=bf16' --set compute.sm.count=66,100,132 \\\n"
    "      --shard 0/2 -o s0.csv\n"
    "  sim sweep configs/h100.cfg --op 'gemm m=4096 n=4096 k=4096 dtype=bf16' --set compute.sm.count=66,100,132 \\\n"
    "      --shard 1/2 -o s1.csv\n"
    "  sim merge s0.csv s1.csv -o sweep.csv\n"
    "  sim plan configs/h100.cfg llama3-8b --gpus 16 --seq 4096 --global-batch 64 --shard 0/2 --csv p0.csv\n"
    "  sim plan configs/h100.cfg llama3-8b --gpus 16 --seq 4096 --global-batch 64 --shard 1/2 --csv p1.csv\n"
    "  sim merge p0.csv p1.csv -o plan.csv\n";

#define MERGE_MAX_FILES 100000

/* One shard file, read whole. */
struct shard {
	const char *path;
	char *text;
	long i, n, points;
	unsigned long long id; /* the sweep's fingerprint (sweep_id in cmd_sweep.c) */
	char *header;          /* the sweep's header: after "point," up to its line break (inclusive) */
	char **rows;           /* each row after its "INDEX,", up to and with its line break */
	long nrows;
};

/* The end of the CSV record starting at p (after its '\n'), or NULL at the end of the text without one. */
static char *record_end(char *p)
{
	int quoted = 0;
	for (; *p; p++) {
		if (*p == '"')
			quoted = !quoted;
		else if (*p == '\n' && !quoted)
			return p + 1;
	}
	return NULL;
}

static int bad(const struct shard *s, long line, const char *what)
{
	fprintf(stderr, "%s:%ld: %s\n", s->path, line, what);
	return SIM_EXIT_TRACE;
}

static int read_shard(struct shard *s)
{
	FILE *f = fopen(s->path, "rb");
	if (!f) {
		fprintf(stderr, "%s: cannot read: %s\n", s->path, strerror(errno));
		return SIM_EXIT_NOINPUT;
	}
	size_t cap = 1 << 16, len = 0, got;
	s->text = malloc(cap);
	while (s->text && (got = fread(s->text + len, 1, cap - len - 1, f)) > 0) {
		len += got;
		if (len + 1 == cap) {
			char *t = cap < ((size_t)1 << 34) ? realloc(s->text, cap * 2) : NULL;
			if (!t) {
				free(s->text);
				s->text = NULL;
				break;
			}
			s->text = t;
			cap *= 2;
		}
	}
	int err = ferror(f);
	fclose(f);
	if (!s->text || err) {
		fprintf(stderr, "%s: cannot read: %s\n", s->path, s->text ? "read error" : "out of memory");
		return s->text ? SIM_EXIT_NOINPUT : SIM_EXIT_INTERNAL;
	}
	s->text[len] = '\0';
	if (memchr(s->text, '\0', len))
		return bad(s, 1, "a NUL byte: not a CSV file");
	/* line 1: the shard line */
	char *p = s->text, *nl = strchr(p, '\n');
	int used = 0;
	size_t pre = strlen(SWEEP_SHARD_LINE);
	if (!nl || strncmp(p, SWEEP_SHARD_LINE, pre) ||
	    sscanf(p + pre, "%ld/%ld of %ld points, sweep %16llx%n", &s->i, &s->n, &s->points, &s->id, &used) != 4 ||
	    p + pre + used != nl || s->n < 1 || s->i < 0 || s->i >= s->n || s->points < 0)
		return bad(s, 1,
		           "expected '" SWEEP_SHARD_LINE
		           "I/N of P points, sweep ID' (a CSV of `sim sweep --shard I/N`)");
	/* line 2: the header */
	p = nl + 1;
	char *e = record_end(p);
	if (!e || strncmp(p, "point,", 6))
		return bad(s, 2, "expected the sweep's header led by the column point");
	s->header = p + 6;
	long want = s->points > s->i ? (s->points - s->i + s->n - 1) / s->n : 0, line = 3;
	s->rows = malloc((size_t)(want ? want : 1) * sizeof *s->rows);
	if (!s->rows) {
		fprintf(stderr, "sim merge: out of memory\n");
		return SIM_EXIT_INTERNAL;
	}
	for (p = e; *p; p = e, line++) {
		e = record_end(p);
		char *end;
		errno = 0;
		long g = strtol(p, &end, 10);
		char msg[160];
		if (!e)
			return bad(s, line, "the last row has no line break (a file cut short?)");
		if (end == p || *end != ',' || errno || s->nrows == want || g != s->i + s->nrows * s->n) {
			snprintf(msg, sizeof msg, "expected %s",
			         s->nrows == want ? "no more rows" : "the row of the next point of the shard");
			if (s->nrows < want)
				snprintf(msg + strlen(msg), sizeof msg - strlen(msg), ", point %ld",
				         s->i + s->nrows * s->n);
			return bad(s, line, msg);
		}
		s->rows[s->nrows++] = end + 1;
	}
	if (s->nrows != want) {
		char msg[160];
		snprintf(msg, sizeof msg, "%ld rows, expected %ld (points %ld, %ld + %ld, ... below %ld)", s->nrows,
		         want, s->i, s->i, s->n, s->points);
		return bad(s, line, msg);
	}
	return 0;
}

/* whether path's first line is a `sim plan --shard` file's (cli_plan_merge joins those) */
static int is_plan_shard(const char *path)
{
	char l[64] = "";
	FILE *f = fopen(path, "r");
	if (f) {
		if (!fgets(l, sizeof l, f))
			l[0] = '\0';
		fclose(f);
	}
	return !strncmp(l, PL_SHARD_LINE, strlen(PL_SHARD_LINE));
}

static size_t span_len(const char *p)
{
	const char *e = record_end((char *)p);
	return e ? (size_t)(e - p) : strlen(p);
}

int cmd_merge(int argc, char **argv)
{
	const char *out = NULL, *plot = NULL;
	const char **paths = calloc((size_t)argc, sizeof *paths);
	int n = 0;
	if (!paths) {
		fprintf(stderr, "sim merge: out of memory\n");
		return SIM_EXIT_INTERNAL;
	}
	int rc = 0;
	for (int i = 1; i < argc && !rc; i++) {
		if (!strcmp(argv[i], "-o") || !strcmp(argv[i], "--plot")) {
			if (i + 1 >= argc)
				rc = cli_usage_error("merge", "%s needs a value", argv[i]);
			else if (argv[i][1] == 'o')
				out = argv[++i];
			else
				plot = argv[++i];
		} else if (argv[i][0] == '-' && argv[i][1])
			rc = cli_unknown_option("merge", cmd_merge_help, argv[i]);
		else
			paths[n++] = argv[i];
	}
	if (!rc && !n)
		rc = cli_usage_error("merge", "expected the shards' CSV files");
	if (!rc && n > MERGE_MAX_FILES)
		rc = cli_usage_error("merge", "%d files: at most %d shards", n, MERGE_MAX_FILES);
	const char *outs[2] = {out, plot};
	if (!rc)
		rc = out_check_inputs("merge", outs, 2, paths, n);
	if (!rc && is_plan_shard(paths[0])) {
		rc = cli_plan_merge(paths, n, out, plot);
		free(paths);
		return rc;
	}
	if (!rc && plot)
		rc = cli_usage_error("merge",
		                     "--plot is for a plan's shards (a sweep's merged CSV is plotted by whatever "
		                     "reads it)");
	struct shard *sh = rc ? NULL : calloc((size_t)n, sizeof *sh);
	if (!rc && !sh) {
		fprintf(stderr, "sim merge: out of memory\n");
		rc = SIM_EXIT_INTERNAL;
	}
	struct shard **by = NULL;
	for (int k = 0; k < n && !rc; k++) {
		sh[k].path = paths[k];
		rc = read_shard(&sh[k]);
		if (!rc && (sh[k].n != sh[0].n || sh[k].points != sh[0].points || sh[k].id != sh[0].id)) {
			char msg[256];
			snprintf(msg, sizeof msg,
			         "shard %ld/%ld of %ld points of sweep %016llx, but %s is of %ld shards of %ld points "
			         "of sweep "
			         "%016llx: not the same sweep",
			         sh[k].i, sh[k].n, sh[k].points, sh[k].id, sh[0].path, sh[0].n, sh[0].points, sh[0].id);
			rc = bad(&sh[k], 1, msg);
		}
		if (!rc && (span_len(sh[k].header) != span_len(sh[0].header) ||
		            memcmp(sh[k].header, sh[0].header, span_len(sh[0].header))))
			rc = bad(&sh[k], 2, "its header is not the first file's: the shards of another sweep");
	}
	if (!rc) {
		by = calloc((size_t)sh[0].n, sizeof *by);
		if (!by) {
			fprintf(stderr, "sim merge: out of memory\n");
			rc = SIM_EXIT_INTERNAL;
		}
	}
	for (int k = 0; k < n && !rc; k++) {
		if (by[sh[k].i]) {
			char msg[256];
			snprintf(msg, sizeof msg, "shard %ld/%ld twice: %s is it too", sh[k].i, sh[k].n,
			         by[sh[k].i]->path);
			rc = bad(&sh[k], 1, msg);
		}
		by[sh[k].i] = &sh[k];
	}
	for (long i = 0; !rc && i < (n ? sh[0].n : 0); i++)
		if (!by[i]) {
			fprintf(stderr, "sim merge: shard %ld/%ld is missing (%d files for %ld shards)\n", i, sh[0].n,
			        n, sh[0].n);
			rc = SIM_EXIT_TRACE;
		}
	struct out_file of = {0};
	char why[1024];
	FILE *f = NULL;
	if (!rc && !(f = out_open(out ? out : "-", &of, why, sizeof why))) {
		fprintf(stderr, "sim merge: cannot write %s: %s\n", out ? out : "stdout", why);
		rc = SIM_EXIT_CANTCREAT;
	}
	if (!rc) {
		fwrite(sh[0].header, 1, span_len(sh[0].header), f);
		for (long g = 0; g < sh[0].points; g++) {
			const char *r = by[g % sh[0].n]->rows[g / sh[0].n];
			fwrite(r, 1, span_len(r), f);
		}
		if (ferror(f) || (of.tmp[0] == 0 && fflush(f))) {
			out_abort(&of);
			fprintf(stderr, "sim merge: cannot write %s: %s\n", out ? out : "stdout",
			        strerror(errno ? errno : EIO));
			rc = SIM_EXIT_CANTCREAT;
		} else if (out_commit(&of, why, sizeof why)) {
			fprintf(stderr, "sim merge: cannot write %s: %s\n", out ? out : "stdout", why);
			rc = SIM_EXIT_CANTCREAT;
		}
	}
	for (int k = 0; sh && k < n; k++) {
		free(sh[k].text);
		free(sh[k].rows);
	}
	free(sh);
	free(by);
	free(paths);
	return rc;
}
