/*
 * import.c -- the importers' entry points: streams each Kineto file (gzip
 * or plain, through zlib: jstream.h) through the Kineto reader, or reads each
 * Chakra file whole for the Chakra reader (at most --max-bytes uncompressed
 * either way), and writes the job once every rank has been read.
 */
#include "arch.h"
#include "chakra_int.h"
#include "import_int.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <zlib.h>

#define DEFAULT_MAX_BYTES (512LL << 20) /* a Chakra file, read whole */
#define KINETO_MAX_BYTES  (4LL << 30)   /* a Kineto file, read as a stream (jstream.h) */

/* The file's bytes, uncompressed; 0 or an exit code with why. */
static int slurp(const char *path, long long max, char **data, size_t *len, char *why, size_t whylen)
{
	*data = NULL;
	*len = 0;
	FILE *f = fopen(path, "rb");
	if (!f) {
		snprintf(why, whylen, "%s: cannot read: %s", path, strerror(errno));
		return SIM_EXIT_NOINPUT;
	}
	unsigned char magic[2] = {0, 0};
	size_t got = fread(magic, 1, 2, f);
	fclose(f);
	int gz = got == 2 && magic[0] == 0x1f && magic[1] == 0x8b;
	if (imp_ends_with(path, ".gz") && !gz) {
		snprintf(why, whylen, "%s: not gzip (the name ends in .gz but the file does not start with 1f 8b)",
		         path);
		return SIM_EXIT_TRACE;
	}
	gzFile z = gzopen(path, "rb");
	if (!z) {
		snprintf(why, whylen, "%s: cannot read: %s", path, errno ? strerror(errno) : "out of memory");
		return errno ? SIM_EXIT_NOINPUT : SIM_EXIT_INTERNAL;
	}
	size_t cap = 1 << 20, n = 0;
	char *buf = malloc(cap + 1);
	int rc = buf ? 0 : SIM_EXIT_INTERNAL;
	while (!rc) {
		if (n == cap) {
			if ((long long)cap >= max + 1) {
				snprintf(why, whylen, "%s: larger than %lld bytes uncompressed (--max-bytes)", path,
				         max);
				rc = SIM_EXIT_TRACE;
				break;
			}
			size_t nc = 2 * cap;
			if ((long long)nc > max + 1)
				nc = (size_t)max + 1;
			char *p = realloc(buf, nc + 1);
			if (!p) {
				rc = SIM_EXIT_INTERNAL;
				break;
			}
			buf = p;
			cap = nc;
		}
		unsigned want = cap - n > (1u << 30) ? (1u << 30) : (unsigned)(cap - n);
		int r = gzread(z, buf + n, want);
		if (r < 0) {
			int e;
			gzerror(z, &e);
			snprintf(why, whylen, "%s: %s", path,
			         e == Z_BUF_ERROR ? "truncated gzip (the compressed stream ends early)"
			                          : "corrupt gzip (the compressed data does not decode)");
			rc = SIM_EXIT_TRACE;
			break;
		}
		if (r == 0) { /* the end: of the data, or of a stream cut short */
			int e;
			gzerror(z, &e);
			if (e != Z_OK) {
				snprintf(why, whylen, "%s: truncated gzip (the compressed stream ends early)", path);
				rc = SIM_EXIT_TRACE;
			}
			break;
		}
		n += (size_t)r;
		if ((long long)n > max) {
			snprintf(why, whylen, "%s: larger than %lld bytes uncompressed (--max-bytes)", path, max);
			rc = SIM_EXIT_TRACE;
		}
	}
	gzclose(z);
	if (rc == SIM_EXIT_INTERNAL)
		snprintf(why, whylen, "%s: out of memory", path);
	if (rc) {
		free(buf);
		return rc;
	}
	buf[n] = 0;
	*data = buf;
	*len = n;
	return 0;
}

int imp_kineto(const char *const *paths, int n, const struct imp_options *o, FILE *out, struct imp_stats *st, char *why,
               size_t whylen)
{
	if (n < 1 || n > IMP_MAX_FILES) {
		snprintf(why, whylen, "expected 1 to %d trace files, not %d", IMP_MAX_FILES, n);
		return SIM_EXIT_USAGE;
	}
	if (o && o->ranks > 0 && n > 1) {
		snprintf(why, whylen, "--ranks %d: given with %d files (it fills a job from one file)", o->ranks, n);
		return SIM_EXIT_USAGE;
	}
	long long kmax = o && o->max_bytes > 0 ? o->max_bytes : KINETO_MAX_BYTES;
	struct kin_rank *ranks = calloc((size_t)n, sizeof *ranks);
	if (!ranks) {
		snprintf(why, whylen, "out of memory");
		return SIM_EXIT_INTERNAL;
	}
	int rc = 0, done = 0;
	for (; done < n && !rc; done++) { /* each file a stream: never whole in memory, nor one JSON tree */
		struct js *J = malloc(sizeof *J);
		if (!J) {
			snprintf(why, whylen, "%s: out of memory", paths[done]);
			rc = SIM_EXIT_INTERNAL;
			break;
		}
		rc = js_open_file(J, paths[done], kmax, why, whylen);
		if (!rc)
			rc = kin_read_js(J, paths[done], o, done, &ranks[done], why, whylen);
		js_close(J);
		free(J);
	}
	if (!rc)
		rc = kin_emit(out, ranks, n, o && n == 1 ? o->ranks : 0, o, st, why, whylen);
	for (int i = 0; i < n; i++)
		kin_rank_free(&ranks[i]);
	free(ranks);
	return rc;
}

int imp_kineto_buf(const char *data, size_t len, const char *name, const struct imp_options *o, FILE *out,
                   struct imp_stats *st, char *why, size_t whylen)
{
	struct kin_rank r;
	int rc = kin_read(data, len, name, o, 0, &r, why, whylen);
	if (!rc)
		rc = kin_emit(out, &r, 1, o ? o->ranks : 0, o, st, why, whylen);
	kin_rank_free(&r);
	return rc;
}

/* R of a name NAME.R.et or NAME.R.et.gz (Chakra's per-rank files), or -1. */
static int rank_of_name(const char *path)
{
	const char *base = strrchr(path, '/');
	base = base ? base + 1 : path;
	size_t n = strlen(base);
	size_t end = imp_ends_with(base, ".et.gz") ? n - 6 : imp_ends_with(base, ".et") ? n - 3 : 0;
	size_t k = end;
	while (k > 0 && base[k - 1] >= '0' && base[k - 1] <= '9')
		k--;
	if (!end || k == end || k == 0 || base[k - 1] != '.' || end - k > 7)
		return -1;
	return atoi(base + k);
}

static int chakra_ranks(const char *const *paths, int n, const struct imp_options *o, FILE *out, struct imp_stats *st,
                        char *why, size_t whylen, const unsigned char *buf, size_t buflen)
{
	if (n < 1 || n > IMP_MAX_FILES) {
		snprintf(why, whylen, "expected 1 to %d trace files, not %d", IMP_MAX_FILES, n);
		return SIM_EXIT_USAGE;
	}
	if (o && o->ranks > 0 && n > 1) {
		snprintf(why, whylen, "--ranks %d: given with %d files (it fills a job from one file's graph)",
		         o->ranks, n);
		return SIM_EXIT_USAGE;
	}
	long long max = o && o->max_bytes > 0 ? o->max_bytes : DEFAULT_MAX_BYTES;
	struct chk_rank *ranks = calloc((size_t)n, sizeof *ranks);
	if (!ranks) {
		snprintf(why, whylen, "out of memory");
		return SIM_EXIT_INTERNAL;
	}
	struct chk_groups G = {0};
	int named = 1, rc = o && o->comm_groups ? chk_groups_load(o->comm_groups, &G, why, whylen) : 0;
	for (int i = 0; i < n; i++)
		named &= rank_of_name(paths[i]) >= 0;
	for (int done = 0; done < n && !rc; done++) {
		char *data = NULL;
		size_t len = buflen;
		if (!buf)
			rc = slurp(paths[done], max, &data, &len, why, whylen);
		if (!rc)
			rc = chk_read(buf ? buf : (const unsigned char *)data, len, paths[done], o, done, &ranks[done],
			              why, whylen);
		free(data);
		if (!rc && named && n > 1)
			ranks[done].job_rank = rank_of_name(paths[done]);
		if (!rc)
			rc = chk_graph(&ranks[done], why, whylen);
	}
	if (!rc)
		rc = chk_emit(out, ranks, n, o, &G, st, why, whylen);
	chk_groups_free(&G);
	for (int i = 0; i < n; i++)
		chk_rank_free(&ranks[i]);
	free(ranks);
	return rc;
}

int imp_chakra(const char *const *paths, int n, const struct imp_options *o, FILE *out, struct imp_stats *st, char *why,
               size_t whylen)
{
	return chakra_ranks(paths, n, o, out, st, why, whylen, NULL, 0);
}

int imp_chakra_buf(const unsigned char *data, size_t len, const char *name, const struct imp_options *o, FILE *out,
                   struct imp_stats *st, char *why, size_t whylen)
{
	return chakra_ranks(&name, 1, o, out, st, why, whylen, data, len);
}
