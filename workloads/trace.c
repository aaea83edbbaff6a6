/*
 * trace.c -- the `simtrace 1` trace: parsed once into a small tree (this
 * file), then expanded lazily for one rank at a time (trace_cursor.c).
 *
 * The parser reads the text line by line (each line copied into a 4 KiB
 * buffer, '#' comments cut, split at white space) and builds:
 *
 *   blocks   lists of nodes; block 0 is the top level, each def, repeat and
 *            on body is a block of its own
 *   nodes    an event (index of a pre-parsed event), a repeat (count, body),
 *            an on (selector set, body) or a call (def index)
 *   events   struct tr_event templates: op lines already through op_parse,
 *            units already read, names interned; only peer=DIM+K is left to
 *            resolve for the rank
 *   names    streams, labels (id=), marks, algo= names, communicators and
 *            defs, each an interned table (a hash of the name to its index)
 *
 * trace_cursor.c expands the tree for one rank at a time (tr_cursor_new,
 * tr_next) and writes an event's canonical text; the types both files read
 * are in trace_int.h.
 */
#include "trace_int.h"

#include "arch.h"

#include <ctype.h>
#include <errno.h>
#include <limits.h>
#include <math.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define LINE_CHARS  TR_LINE_MAX /* longest line */
#define NAME_CHARS  47          /* longest name */
#define REPEAT_MAX  1000000000LL
#define SHOW_MAX    40                    /* characters of a token quoted in a message */
#define BYTES_LIMIT 4611686018427387904.0 /* 2^62 */
#define TAG_MAX     2147483647L
#define MAX_TOKENS  (LINE_CHARS / 2 + 2)

static const char *const dim_names[DIM_COUNT + 1] = {"tp", "cp", "ep", "dp", "pp", NULL};
static const char *const coll_names[CO_COUNT + 1] = {"allreduce", "allgather", "reducescatter", "alltoall", "broadcast",
                                                     "reduce",    "barrier",   "shift",         NULL};
static const char *const kind_names[TK_COUNT] = {"op", "coll", "send", "recv", "delay", "mark", "memory"};
static const char *const mem_names[MEM_COUNT + 1] = {"params", "grads",     "optimizer", "activations",
                                                     "kv",     "workspace", NULL};
_Static_assert(sizeof dim_names / sizeof dim_names[0] == DIM_COUNT + 1, "one name per enum tr_dim, then NULL");
_Static_assert(sizeof coll_names / sizeof coll_names[0] == CO_COUNT + 1, "one name per enum tr_coll, then NULL");

const char *tr_dim_name(enum tr_dim d)
{
	return (int)d >= 0 && d < DIM_COUNT ? dim_names[d] : "?";
}
const char *tr_coll_name(enum tr_coll c)
{
	return (int)c >= 0 && c < CO_COUNT ? coll_names[c] : "?";
}
const char *tr_kind_name(enum tr_kind k)
{
	return (int)k >= 0 && k < TK_COUNT ? kind_names[k] : "?";
}

/* ---- growing arrays ---- */

/* Makes room for need elements; NULL (v untouched) when memory runs out. */
static void *grow(void *v, int *cap, int need, size_t elem)
{
	if (need <= *cap)
		return v;
	int nc = *cap ? *cap : 8;
	while (nc < need) {
		if (nc > INT_MAX / 2)
			return NULL;
		nc *= 2;
	}
	void *p = realloc(v, (size_t)nc * elem);
	if (!p)
		return NULL;
	*cap = nc;
	return p;
}

/* ---- name tables ---- */

static uint32_t hash_name(const char *p, size_t n)
{
	uint32_t h = 2166136261u;
	for (size_t i = 0; i < n; i++)
		h = (h ^ (unsigned char)p[i]) * 16777619u;
	return h;
}

static int names_find(const struct names *t, const char *p, size_t n)
{
	if (!t->hcap)
		return -1;
	uint32_t m = (uint32_t)t->hcap - 1, h = hash_name(p, n) & m;
	for (; t->ht[h] >= 0; h = (h + 1) & m) {
		const char *s = t->s[t->ht[h]];
		if (strlen(s) == n && memcmp(s, p, n) == 0)
			return t->ht[h];
	}
	return -1;
}

static void names_insert_hash(struct names *t, int i)
{
	uint32_t m = (uint32_t)t->hcap - 1, h = hash_name(t->s[i], strlen(t->s[i])) & m;
	while (t->ht[h] >= 0)
		h = (h + 1) & m;
	t->ht[h] = i;
}

/* Adds a name not in the table; its index, or -1 when memory runs out. */
static int names_add(struct names *t, const char *p, size_t n, int line)
{
	if (t->n >= t->cap) {
		if (t->cap > INT_MAX / 2)
			return -1;
		int cap = t->cap ? 2 * t->cap : 8;
		char **s = realloc(t->s, (size_t)cap * sizeof *s);
		if (!s)
			return -1;
		t->s = s;
		int *l = realloc(t->line, (size_t)cap * sizeof *l);
		if (!l)
			return -1;
		t->line = l;
		t->cap = cap;
	}
	if (2 * (t->n + 1) > t->hcap) {
		int hcap = t->hcap ? 2 * t->hcap : 16;
		int *ht = malloc((size_t)hcap * sizeof *ht);
		if (!ht)
			return -1;
		for (int i = 0; i < hcap; i++)
			ht[i] = -1;
		free(t->ht);
		t->ht = ht;
		t->hcap = hcap;
		for (int i = 0; i < t->n; i++)
			names_insert_hash(t, i);
	}
	char *s = malloc(n + 1);
	if (!s)
		return -1;
	memcpy(s, p, n);
	s[n] = '\0';
	t->s[t->n] = s;
	t->line[t->n] = line;
	names_insert_hash(t, t->n);
	return t->n++;
}

static void names_free(struct names *t)
{
	for (int i = 0; i < t->n; i++)
		free(t->s[i]);
	free(t->s);
	free(t->line);
	free(t->ht);
}

void tr_free(struct trace *t)
{
	if (!t)
		return;
	free(t->path);
	names_free(&t->streams);
	names_free(&t->labels);
	names_free(&t->marks);
	names_free(&t->algos);
	for (int i = 0; i < t->commnames.n && t->comms; i++)
		free(t->comms[i].iv);
	names_free(&t->commnames);
	names_free(&t->defnames);
	free(t->comms);
	free(t->defs);
	for (int i = 0; i < t->nblocks; i++)
		free(t->blocks[i].v);
	free(t->blocks);
	free(t->evs);
	free(t->ivals);
	free(t->sels);
	free(t->selsets);
	free(t);
}

/* ---- accessors ---- */

const char *tr_path(const struct trace *t)
{
	return t ? t->path : "?";
}
int tr_ranks(const struct trace *t)
{
	return t ? t->ranks : 0;
}
int tr_dim_size(const struct trace *t, enum tr_dim d)
{
	return t && (int)d >= 0 && d < DIM_COUNT ? t->size[d] : 1;
}
int tr_coord(const struct trace *t, int rank, enum tr_dim d)
{
	if (!t || (int)d < 0 || d >= DIM_COUNT || rank < 0 || rank >= t->ranks)
		return 0;
	return rank / t->stride[d] % t->size[d];
}
int tr_nstreams(const struct trace *t)
{
	return t ? t->streams.n : 0;
}
const char *tr_stream_name(const struct trace *t, int i)
{
	return t ? names_get(&t->streams, i) : "?";
}
int tr_nlabels(const struct trace *t)
{
	return t ? t->labels.n : 0;
}
const char *tr_label_name(const struct trace *t, int i)
{
	return t ? names_get(&t->labels, i) : "?";
}
int tr_nmarks(const struct trace *t)
{
	return t ? t->marks.n : 0;
}
const char *tr_mark_name(const struct trace *t, int i)
{
	return t ? names_get(&t->marks, i) : "?";
}
int tr_nalgos(const struct trace *t)
{
	return t ? t->algos.n : 0;
}
const char *tr_algo_name(const struct trace *t, int i)
{
	if (i == TR_ALGO_AUTO)
		return "auto";
	return t ? names_get(&t->algos, i) : "?";
}
int tr_algo_line(const struct trace *t, int i)
{
	return t && i >= 0 && i < t->algos.n ? t->algos.line[i] : 0;
}
int tr_ncomms(const struct trace *t)
{
	return t ? t->commnames.n : 0;
}
const char *tr_comm_name(const struct trace *t, int i)
{
	return t ? names_get(&t->commnames, i) : "?";
}
int tr_comm_line(const struct trace *t, int i)
{
	return t && i >= 0 && i < t->commnames.n ? t->commnames.line[i] : 0;
}

/* Whether rank lies in one of n sorted, disjoint ranges. */
static int in_ranges(const struct ival *v, int n, int rank)
{
	int lo = 0, hi = n - 1;
	while (lo <= hi) {
		int mid = lo + (hi - lo) / 2;
		if (rank < v[mid].lo)
			hi = mid - 1;
		else if (rank > v[mid].hi)
			lo = mid + 1;
		else
			return 1;
	}
	return 0;
}

int tr_comm_group(const struct trace *t, int comm, int rank, int *members, int max, int *group_id)
{
	if (group_id)
		*group_id = -1;
	if (!t || comm < 0 || comm >= t->commnames.n || rank < 0 || rank >= t->ranks)
		return 0;
	if (!members)
		max = 0;
	const struct comm *c = &t->comms[comm];
	if (c->kind == CK_WORLD) {
		for (int i = 0; i < max && i < t->ranks; i++)
			members[i] = i;
		if (group_id)
			*group_id = 0;
		return t->ranks;
	}
	if (c->kind == CK_RANKS) {
		if (!in_ranges(c->iv, c->niv, rank))
			return 0;
		int k = 0;
		for (int i = 0; i < c->niv && k < max; i++)
			for (int r = c->iv[i].lo; r <= c->iv[i].hi && k < max; r++)
				members[k++] = r;
		if (group_id)
			*group_id = c->iv[0].lo;
		return c->n;
	}
	/* the dims of the group, fastest first (increasing stride) */
	int d[DIM_COUNT], nd = 0, size = 1, base = rank;
	for (int i = 0; i < DIM_COUNT; i++) {
		int dim = t->order[i];
		if (!(c->dims & (1u << dim)))
			continue;
		d[nd++] = dim;
		size *= t->size[dim];
		base -= tr_coord(t, rank, (enum tr_dim)dim) * t->stride[dim];
	}
	if (group_id)
		*group_id = base;
	/* an odometer, fastest dim first: since each stride is at least the
	   span of the faster dims, this counts in increasing rank order */
	int cnt[DIM_COUNT] = {0}, r = base;
	for (int i = 0; i < max && i < size; i++) {
		members[i] = r;
		for (int j = 0; j < nd; j++) {
			if (++cnt[j] < t->size[d[j]]) {
				r += t->stride[d[j]];
				break;
			}
			r -= (t->size[d[j]] - 1) * t->stride[d[j]];
			cnt[j] = 0;
		}
	}
	return size;
}

/* The size of every group of a communicator. */
static int comm_size(const struct trace *t, int comm)
{
	const struct comm *c = &t->comms[comm];
	if (c->kind == CK_WORLD)
		return t->ranks;
	if (c->kind == CK_RANKS)
		return c->n;
	int size = 1;
	for (int d = 0; d < DIM_COUNT; d++)
		if (c->dims & (1u << d))
			size *= t->size[d];
	return size;
}

/* ---- messages ---- */

struct span {
	const char *p;
	size_t n;
};

static int is(struct span s, const char *word)
{
	return strlen(word) == s.n && memcmp(s.p, word, s.n) == 0;
}

/* A token as quoted in a message: at most SHOW_MAX characters, unprintable
   bytes as '?', "..." when cut. */
static const char *show(char out[SHOW_MAX + 4], struct span s)
{
	size_t i, lim = s.n > SHOW_MAX ? SHOW_MAX : s.n;
	for (i = 0; i < lim; i++)
		out[i] = isprint((unsigned char)s.p[i]) ? s.p[i] : '?';
	if (s.n > SHOW_MAX) {
		memcpy(out + i, "...", 3);
		i += 3;
	}
	out[i] = '\0';
	return out;
}

static void one_line(char *why)
{
	for (char *c = why; *c; c++)
		if (!isprint((unsigned char)*c))
			*c = '?';
}

int tr_fail_at(char *why, size_t whylen, const char *path, int line, const char *fmt, ...)
{
	if (!why || !whylen)
		return -1;
	int n = line > 0 ? snprintf(why, whylen, "%s:%d: ", path, line) : snprintf(why, whylen, "%s: ", path);
	if (n >= 0 && (size_t)n < whylen) {
		va_list ap;
		va_start(ap, fmt);
		vsnprintf(why + n, whylen - (size_t)n, fmt, ap);
		va_end(ap);
	}
	one_line(why);
	return -1;
}

/* ---- the parser ---- */

struct parser {
	struct trace *t;
	const char *name;
	char *why;
	size_t whylen;
	const char *next; /* the rest of the text */
	int line;
	char buf[LINE_CHARS + 1];
	struct span tok[MAX_TOKENS];
	int ntok;
	int header, ranks_line, layout_line, body_line;
	int depth;                /* 0 at the top level */
	int blk[MAX_DEPTH + 1];   /* the open blocks */
	int bline[MAX_DEPTH + 1]; /* where each was opened */
	int bdef[MAX_DEPTH + 1];  /* def index, or -1 */
	int height[MAX_DEPTH + 1];
};

#if defined(__GNUC__)
__attribute__((format(printf, 2, 3)))
#endif
static int
perr(struct parser *P, const char *fmt, ...)
{
	char msg[TR_MSG_MAX];
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(msg, sizeof msg, fmt, ap);
	va_end(ap);
	return tr_fail_at(P->why, P->whylen, P->name, P->line, "%s", msg);
}

static int oom(struct parser *P)
{
	return perr(P, "out of memory");
}

static int tokenize(const char *s, struct span *tok, int max)
{
	int n = 0;
	for (const char *p = s; *p;) {
		while (*p && isspace((unsigned char)*p))
			p++;
		if (!*p)
			break;
		const char *b = p;
		while (*p && !isspace((unsigned char)*p))
			p++;
		if (n < max)
			tok[n++] = (struct span){b, (size_t)(p - b)};
	}
	return n;
}

/* The next line into P->buf (comment cut) and P->tok. 1, 0 at the end, -1. */
static int read_line(struct parser *P)
{
	const char *p = P->next;
	if (!*p)
		return 0;
	const char *e = strchr(p, '\n');
	size_t n = e ? (size_t)(e - p) : strlen(p);
	P->next = e ? e + 1 : p + n;
	P->line++;
	if (n > LINE_CHARS)
		return perr(P, "line is longer than %d characters", LINE_CHARS);
	memcpy(P->buf, p, n);
	P->buf[n] = '\0';
	char *hash = strchr(P->buf, '#');
	if (hash)
		*hash = '\0';
	P->ntok = tokenize(P->buf, P->tok, MAX_TOKENS);
	return 1;
}

/* The first line after the current one that defines a label (id=NAME) or,
   def != 0, a def NAME; 0 if none. */
static int later_line(const struct parser *P, int def, struct span name)
{
	char buf[LINE_CHARS + 1];
	struct span tok[MAX_TOKENS];
	int line = P->line;
	for (const char *p = P->next; *p;) {
		const char *e = strchr(p, '\n');
		size_t n = e ? (size_t)(e - p) : strlen(p);
		line++;
		if (n <= LINE_CHARS) {
			memcpy(buf, p, n);
			buf[n] = '\0';
			char *hash = strchr(buf, '#');
			if (hash)
				*hash = '\0';
			int nt = tokenize(buf, tok, MAX_TOKENS);
			if (def && nt >= 2 && is(tok[0], "def") && tok[1].n == name.n &&
			    !memcmp(tok[1].p, name.p, name.n))
				return line;
			for (int i = 1; !def && i < nt; i++)
				if (tok[i].n == name.n + 3 && !memcmp(tok[i].p, "id=", 3) &&
				    !memcmp(tok[i].p + 3, name.p, name.n))
					return line;
		}
		p = e ? e + 1 : p + n;
	}
	return 0;
}

/* ---- values ---- */

static int name_ok(struct span v)
{
	if (v.n == 0 || v.n > NAME_CHARS)
		return 0;
	for (size_t i = 0; i < v.n; i++) {
		unsigned char c = (unsigned char)v.p[i];
		if (!isalnum(c) && c != '_' && c != '.' && c != '-')
			return 0;
	}
	return 1;
}

static int bad_name(struct parser *P, const char *stmt, const char *what, struct span v)
{
	char s[SHOW_MAX + 4];
	return perr(P, "%s: %s'%s' is not a name (1 to %d letters, digits, '_', '.' or '-')", stmt, what, show(s, v),
	            NAME_CHARS);
}

/* Plain decimal digits up to max. 0 ok, -1 malformed, -2 above max. */
static int parse_uint(struct span v, long long max, long long *out)
{
	long long x = 0;
	if (v.n == 0)
		return -1;
	for (size_t i = 0; i < v.n; i++)
		if (v.p[i] < '0' || v.p[i] > '9')
			return -1;
	for (size_t i = 0; i < v.n; i++) {
		int d = v.p[i] - '0';
		if (x > (max - d) / 10)
			return -2;
		x = x * 10 + d;
	}
	*out = x;
	return 0;
}

static int choice(struct span v, const char *const *names)
{
	for (int i = 0; names[i]; i++)
		if (is(v, names[i]))
			return i;
	return -1;
}

static void choice_list(char *buf, size_t len, const char *const *names)
{
	buf[0] = '\0';
	for (int i = 0; names[i]; i++) {
		strncat(buf, i ? "|" : "", len - strlen(buf) - 1);
		strncat(buf, names[i], len - strlen(buf) - 1);
	}
}

/* A size (bytes=, memory params=): a plain number of bytes or a quantity
   with a byte unit; whole, zero or more, below 2^62. */
static int parse_size(struct parser *P, const char *stmt, const char *key, struct span v, double *out)
{
	char buf[128], s[SHOW_MAX + 4], uwhy[256];
	double x = 0;
	show(s, v);
	if (v.n >= sizeof buf)
		return perr(P, "%s: %s=%s is too long for a quantity", stmt, key, s);
	memcpy(buf, v.p, v.n);
	buf[v.n] = '\0';
	if (units_parse(buf, UNIT_NONE, &x, uwhy, sizeof uwhy) && units_parse(buf, UNIT_BYTES, &x, uwhy, sizeof uwhy))
		return perr(P, "%s: %s=%s: %s", stmt, key, s, uwhy);
	if (!isfinite(x) || x < 0)
		return perr(P, "%s: %s=%s must not be negative", stmt, key, s);
	if (x != floor(x))
		return perr(P, "%s: %s=%s is not a whole number of bytes", stmt, key, s);
	if (x >= BYTES_LIMIT)
		return perr(P, "%s: %s=%s is too large (must be below 2^62 bytes)", stmt, key, s);
	*out = x;
	return 0;
}

/* A quantity of one kind of unit (delay time=, ref=), as units_parse reads it. */
static int parse_quantity(struct parser *P, const char *stmt, const char *key, struct span v, enum unit_kind kind,
                          double *out)
{
	char buf[128], s[SHOW_MAX + 4], uwhy[256];
	show(s, v);
	if (v.n >= sizeof buf)
		return perr(P, "%s: %s=%s is too long for a quantity", stmt, key, s);
	memcpy(buf, v.p, v.n);
	buf[v.n] = '\0';
	if (units_parse(buf, kind, out, uwhy, sizeof uwhy))
		return perr(P, "%s: %s=%s: %s", stmt, key, s, uwhy);
	return 0;
}

static int parse_bytes(struct parser *P, const char *stmt, struct span v, double *out)
{
	return parse_size(P, stmt, "bytes", v, out);
}

static int cmp_ival(const void *a, const void *b)
{
	const struct ival *x = a, *y = b;
	return x->lo != y->lo ? (x->lo < y->lo ? -1 : 1) : (x->hi < y->hi ? -1 : x->hi > y->hi);
}

/* A list of ranks or coordinates: N, A-B, last (= size-1) or A-last, comma
   separated; every value below size. Appended to t->ivals. key is the key
   as written with its operator ("ranks=", "pp!="); dim names the layout dim,
   NULL for rank numbers. */
static int parse_list(struct parser *P, const char *stmt, const char *key, const char *dim, struct span v, int size,
                      int *first, int *count)
{
	struct trace *t = P->t;
	char s[SHOW_MAX + 4], it[SHOW_MAX + 4];
	show(s, v);
	*first = t->nivals;
	*count = 0;
	if (v.n == 0)
		return perr(P, "%s: %s has no value", stmt, key);
	const char *p = v.p, *end = v.p + v.n;
	while (p <= end) {
		const char *c = memchr(p, ',', (size_t)(end - p));
		struct span item = {p, (size_t)((c ? c : end) - p)};
		p = (c ? c : end) + 1;
		if (item.n == 0)
			return perr(P, "%s: %s%s has an empty item (expected N, A-B or last, separated by ',')", stmt,
			            key, s);
		const char *dash = memchr(item.p, '-', item.n);
		struct span a = item, b = item;
		if (dash) {
			a.n = (size_t)(dash - item.p);
			b.p = dash + 1;
			b.n = item.n - a.n - 1;
		}
		long long x[2];
		struct span part[2] = {a, b};
		for (int k = 0; k < 2; k++) {
			if (is(part[k], "last")) {
				x[k] = size - 1;
				continue;
			}
			int r = parse_uint(part[k], (long long)INT_MAX, &x[k]);
			if (r == -1)
				return perr(P, "%s: %s%s: '%s' is not a number, a range A-B or 'last'", stmt, key, s,
				            show(it, item));
			if (r == -2 || x[k] >= size) {
				show(it, part[k]);
				if (!dim)
					return perr(P, "%s: %s%s: rank %s is out of range (ranks %d: 0-%d)", stmt, key,
					            s, it, size, size - 1);
				return perr(P, "%s: %s%s: %s is out of range (the layout has %s=%d: 0-%d)", stmt, key,
				            s, it, dim, size, size - 1);
			}
		}
		if (x[0] > x[1])
			return perr(P, "%s: %s%s: the range %s runs backwards", stmt, key, s, show(it, item));
		struct ival *iv = grow(t->ivals, &t->icap, t->nivals + 1, sizeof *iv);
		if (!iv)
			return oom(P);
		t->ivals = iv;
		t->ivals[t->nivals++] = (struct ival){(int)x[0], (int)x[1]};
		(*count)++;
	}
	return 0;
}

/* key=value arguments from token `from` on, against a NULL-terminated list of
   keys; vals[i].p is NULL for a key not given. */
static int parse_keys(struct parser *P, const char *stmt, int from, int to, const char *const *keys, struct span *vals)
{
	char s[SHOW_MAX + 4];
	for (int i = 0; keys[i]; i++)
		vals[i] = (struct span){NULL, 0};
	for (int i = from; i < to; i++) {
		struct span tk = P->tok[i];
		const char *eq = memchr(tk.p, '=', tk.n);
		if (!eq)
			return perr(P, "%s: '%s' is not key=value", stmt, show(s, tk));
		struct span k = {tk.p, (size_t)(eq - tk.p)}, v = {eq + 1, tk.n - k.n - 1};
		if (k.n == 0)
			return perr(P, "%s: '%s' has no key before '='", stmt, show(s, tk));
		int idx = choice(k, keys);
		if (idx < 0) {
			char list[256] = "";
			for (int j = 0; keys[j]; j++) {
				strncat(list, j ? ", " : "", sizeof list - strlen(list) - 1);
				strncat(list, keys[j], sizeof list - strlen(list) - 1);
			}
			return perr(P, "%s: unknown key '%s' (expected %s)", stmt, show(s, k), list);
		}
		if (vals[idx].p)
			return perr(P, "%s: %s= given twice", stmt, keys[idx]);
		if (v.n == 0)
			return perr(P, "%s: %s= has no value", stmt, keys[idx]);
		vals[idx] = v;
	}
	return 0;
}

/* ---- blocks and nodes ---- */

static int new_block(struct parser *P)
{
	struct trace *t = P->t;
	struct block *b = grow(t->blocks, &t->bcap, t->nblocks + 1, sizeof *b);
	if (!b)
		return -1;
	t->blocks = b;
	t->blocks[t->nblocks] = (struct block){NULL, 0, 0};
	return t->nblocks++;
}

static int add_node(struct parser *P, struct node nd)
{
	struct block *b = &P->t->blocks[P->blk[P->depth]];
	struct node *v = grow(b->v, &b->cap, b->n + 1, sizeof *v);
	if (!v)
		return oom(P);
	b->v = v;
	b->v[b->n++] = nd;
	return 0;
}

/* Opens a block; a node in the current block points to it unless it is a
   def's body (def >= 0). */
static int open_block(struct parser *P, int type, int arg, long long count, int def)
{
	if (P->depth + 1 > MAX_DEPTH)
		return perr(P, "blocks nest deeper than %d (this '{' opens level %d)", MAX_DEPTH, P->depth + 1);
	int b = new_block(P);
	if (b < 0)
		return oom(P);
	if (def < 0 && add_node(P, (struct node){type, P->line, arg, b, count}))
		return -1;
	P->depth++;
	P->blk[P->depth] = b;
	P->bline[P->depth] = P->line;
	P->bdef[P->depth] = def;
	P->height[P->depth] = 0;
	return 0;
}

static void raise_height(struct parser *P, int h)
{
	if (h > P->height[P->depth])
		P->height[P->depth] = h;
}

/* ---- statements ---- */

static int st_header(struct parser *P)
{
	char s[SHOW_MAX + 4];
	struct span k = P->tok[0];
	if (!is(k, "simtrace"))
		return perr(P, "expected the header 'simtrace 1' on the first line (not '%s')", show(s, k));
	if (P->ntok != 2)
		return perr(P, "the header must be exactly 'simtrace 1'");
	long long v;
	int r = parse_uint(P->tok[1], (long long)INT_MAX, &v);
	if (r == 0 && v == 1 && P->tok[1].n == 1) {
		P->header = P->line;
		return 0;
	}
	if (r == -1)
		return perr(P, "the header must be exactly 'simtrace 1' (not 'simtrace %s')", show(s, P->tok[1]));
	return perr(P, "unsupported trace version %s (this sim reads simtrace 1)", show(s, P->tok[1]));
}

static int st_ranks(struct parser *P)
{
	char s[SHOW_MAX + 4];
	if (P->ranks_line)
		return perr(P, "ranks given twice (first at line %d)", P->ranks_line);
	if (P->ntok != 2)
		return perr(P, "ranks: expected 'ranks N' (how many ranks run the trace)");
	long long v;
	int r = parse_uint(P->tok[1], (long long)INT_MAX, &v);
	if (r || v < 1 || v > TR_MAX_RANKS)
		return perr(P, "ranks %s: expected an integer from 1 to %d", show(s, P->tok[1]), TR_MAX_RANKS);
	P->t->ranks = (int)v;
	P->ranks_line = P->line;
	return 0;
}

static int st_layout(struct parser *P)
{
	static const char *const keys[] = {"tp", "cp", "ep", "dp", "pp", "order", NULL};
	struct trace *t = P->t;
	char s[SHOW_MAX + 4];
	struct span v[7];
	if (P->layout_line)
		return perr(P, "layout given twice (first at line %d)", P->layout_line);
	if (P->depth)
		return perr(P, "layout belongs at the top level (not inside a block)");
	if (P->body_line)
		return perr(P, "layout must come before the first op, comm, def or block (line %d)", P->body_line);
	if (P->ntok < 2)
		return perr(P, "layout: expected dims such as 'layout tp=8 pp=4 dp=2'");
	if (parse_keys(P, "layout", 1, P->ntok, keys, v))
		return -1;
	unsigned long long prod = 1;
	char dims[128] = "";
	for (int d = 0; d < DIM_COUNT; d++) {
		if (!v[d].p)
			continue;
		long long x;
		if (parse_uint(v[d], TR_MAX_RANKS, &x) || x < 1)
			return perr(P, "layout: %s=%s must be an integer from 1 to %d", dim_names[d], show(s, v[d]),
			            TR_MAX_RANKS);
		t->size[d] = (int)x;
		if (prod <= (unsigned long long)TR_MAX_RANKS)
			prod *= (unsigned long long)x; /* below 2^40: no overflow */
		size_t used = strlen(dims);
		snprintf(dims + used, sizeof dims - used, "%s%s=%d", used ? " " : "", dim_names[d], (int)x);
	}
	if (prod != (unsigned long long)t->ranks) {
		if (prod > (unsigned long long)TR_MAX_RANKS)
			return perr(
			    P, "layout: %s makes more than %d ranks, but ranks is %d (the product must equal ranks)",
			    dims[0] ? dims : "(no dims)", TR_MAX_RANKS, t->ranks);
		return perr(P, "layout: %s makes %llu ranks, but ranks is %d (the product must equal ranks)",
		            dims[0] ? dims : "(no dims)", prod, t->ranks);
	}
	if (v[5].p) { /* order= */
		int n = 0, seen[DIM_COUNT] = {0};
		const char *p = v[5].p, *end = v[5].p + v[5].n;
		while (p <= end) {
			const char *c = memchr(p, ',', (size_t)(end - p));
			struct span item = {p, (size_t)((c ? c : end) - p)};
			p = (c ? c : end) + 1;
			int d = choice(item, dim_names);
			if (d < 0)
				return perr(P, "layout: order=%s: '%s' is not a dim (expected tp, cp, ep, dp, pp)",
				            show(s, v[5]), item.n ? show((char[SHOW_MAX + 4]){0}, item) : "");
			if (seen[d])
				return perr(P, "layout: order= names %s twice", dim_names[d]);
			seen[d] = 1;
			t->order[n++] = d;
		}
		for (int d = 0; d < DIM_COUNT; d++) {
			if (seen[d])
				continue;
			if (t->size[d] > 1)
				return perr(P, "layout: order= leaves out %s (%s=%d); name every dim above 1",
				            dim_names[d], dim_names[d], t->size[d]);
			t->order[n++] = d;
		}
	}
	int stride = 1;
	for (int i = 0; i < DIM_COUNT; i++) {
		t->stride[t->order[i]] = stride;
		stride *= t->size[t->order[i]];
	}
	P->layout_line = P->line;
	return 0;
}

static int st_comm(struct parser *P)
{
	static const char *const keys[] = {"dims", "ranks", NULL};
	struct trace *t = P->t;
	char s[SHOW_MAX + 4];
	struct span v[2];
	if (P->depth)
		return perr(P, "comm belongs at the top level (not inside a block)");
	if (P->ntok < 3)
		return perr(P, "comm: expected 'comm NAME dims=DIM,...' or 'comm NAME ranks=LIST'");
	struct span name = P->tok[1];
	if (!name_ok(name))
		return bad_name(P, "comm", "", name);
	int old = names_find(&t->commnames, name.p, name.n);
	if (old >= 0 && t->commnames.line[old] == 0)
		return perr(P, "comm %s: the name of a built-in communicator", show(s, name));
	if (old >= 0)
		return perr(P, "comm %s is already defined at line %d", show(s, name), t->commnames.line[old]);
	char stmt[64];
	snprintf(stmt, sizeof stmt, "comm %.*s", (int)name.n, name.p);
	if (parse_keys(P, stmt, 2, P->ntok, keys, v))
		return -1;
	if (v[0].p && v[1].p)
		return perr(P, "%s: give dims= or ranks=, not both", stmt);
	struct comm c = {CK_DIMS, 0, NULL, 0, 0};
	if (v[0].p) {
		const char *p = v[0].p, *end = v[0].p + v[0].n;
		while (p <= end) {
			const char *cm = memchr(p, ',', (size_t)(end - p));
			struct span item = {p, (size_t)((cm ? cm : end) - p)};
			p = (cm ? cm : end) + 1;
			int d = choice(item, dim_names);
			if (d < 0)
				return perr(P, "%s: dims=%s: '%s' is not a dim (expected tp, cp, ep, dp, pp)", stmt,
				            show(s, v[0]), show((char[SHOW_MAX + 4]){0}, item));
			if (c.dims & (1u << d))
				return perr(P, "%s: dims= names %s twice", stmt, dim_names[d]);
			c.dims |= 1u << d;
		}
	} else if (v[1].p) {
		int first, n;
		if (parse_list(P, stmt, "ranks=", NULL, v[1], t->ranks, &first, &n))
			return -1;
		/* sorted and merged: memory follows the text, not the rank count */
		qsort(t->ivals + first, (size_t)n, sizeof *t->ivals, cmp_ival);
		c.kind = CK_RANKS;
		c.iv = malloc((size_t)n * sizeof *c.iv);
		if (!c.iv)
			return oom(P);
		for (int i = first; i < first + n; i++) {
			struct ival x = t->ivals[i];
			if (c.niv && x.lo <= c.iv[c.niv - 1].hi + 1) {
				if (x.hi > c.iv[c.niv - 1].hi)
					c.iv[c.niv - 1].hi = x.hi;
			} else {
				c.iv[c.niv++] = x;
			}
		}
		for (int i = 0; i < c.niv; i++)
			c.n += c.iv[i].hi - c.iv[i].lo + 1;
		t->nivals = first; /* the list lives on in the comm */
	} else {
		return perr(P, "%s: expected dims=DIM,... or ranks=LIST", stmt);
	}
	struct comm *cs = grow(t->comms, &t->ccap, t->commnames.n + 1, sizeof *cs);
	if (!cs) {
		free(c.iv);
		return oom(P);
	}
	t->comms = cs;
	t->comms[t->commnames.n] = c;
	if (names_add(&t->commnames, name.p, name.n, P->line) < 0) {
		free(c.iv);
		return oom(P);
	}
	return 0;
}

static int st_def(struct parser *P)
{
	struct trace *t = P->t;
	char s[SHOW_MAX + 4];
	if (P->depth)
		return perr(P, "def belongs at the top level (not inside a block)");
	if (P->ntok != 3 || !is(P->tok[2], "{"))
		return perr(P, "def: expected 'def NAME {'");
	struct span name = P->tok[1];
	if (!name_ok(name))
		return bad_name(P, "def", "", name);
	int old = names_find(&t->defnames, name.p, name.n);
	if (old >= 0)
		return perr(P, "def %s is already defined at line %d", show(s, name), t->defnames.line[old]);
	struct def *d = grow(t->defs, &t->dcap, t->defnames.n + 1, sizeof *d);
	if (!d)
		return oom(P);
	t->defs = d;
	int idx = t->defnames.n;
	if (open_block(P, 0, 0, 0, idx))
		return -1;
	t->defs[idx] = (struct def){P->blk[P->depth], 0, 1};
	if (names_add(&t->defnames, name.p, name.n, P->line) < 0)
		return oom(P);
	return 0;
}

static int st_close(struct parser *P)
{
	if (P->depth == 0)
		return perr(P, "'}' without an open block");
	if (P->ntok != 1)
		return perr(P, "'}' must be alone on its line");
	int h = P->height[P->depth], def = P->bdef[P->depth];
	P->depth--;
	if (def >= 0) {
		P->t->defs[def].height = h;
		P->t->defs[def].open = 0;
	} else {
		raise_height(P, h + 1);
	}
	return 0;
}

static int st_call(struct parser *P)
{
	struct trace *t = P->t;
	char s[SHOW_MAX + 4];
	if (P->ntok != 2)
		return perr(P, "call: expected 'call NAME'");
	struct span name = P->tok[1];
	show(s, name);
	int d = names_find(&t->defnames, name.p, name.n);
	if (d < 0) {
		int later = name_ok(name) ? later_line(P, 1, name) : 0;
		if (later)
			return perr(P,
			            "call %s: def %s is at line %d, after this call (a def must come before its calls)",
			            s, s, later);
		return perr(P, "call %s: no def %s before this line (a def must come before its calls)", s, s);
	}
	if (t->defs[d].open)
		return perr(P, "call %s inside def %s: a def cannot call itself (cycle %s -> %s)", s, s, s, s);
	int h = t->defs[d].height + 1;
	if (P->depth + h > MAX_DEPTH)
		return perr(P, "call %s: blocks nest deeper than %d here (def %s at line %d nests %d deep)", s,
		            MAX_DEPTH, s, t->defnames.line[d], h);
	if (add_node(P, (struct node){N_CALL, P->line, d, -1, 1}))
		return -1;
	raise_height(P, h);
	return 0;
}

static int st_repeat(struct parser *P)
{
	char s[SHOW_MAX + 4];
	if (P->ntok != 3 || !is(P->tok[2], "{"))
		return perr(P, "repeat: expected 'repeat N {'");
	long long n;
	int r = parse_uint(P->tok[1], REPEAT_MAX, &n);
	if (r || n < 1)
		return perr(P, "repeat %s: the count must be an integer from 1 to %lld", show(s, P->tok[1]),
		            REPEAT_MAX);
	return open_block(P, N_REPEAT, 0, n, -1);
}

static int st_on(struct parser *P)
{
	static const char *const keys[] = {"rank", "ranks", "tp", "cp", "ep", "dp", "pp", NULL};
	struct trace *t = P->t;
	char s[SHOW_MAX + 4];
	if (P->ntok < 3 || !is(P->tok[P->ntok - 1], "{"))
		return perr(P, "on: expected 'on SELECTOR... {' (selectors such as pp=0, pp!=last, ranks=0-7)");
	int first = t->nsels, seen[DIM_COUNT + 1] = {0};
	for (int i = 1; i < P->ntok - 1; i++) {
		struct span tk = P->tok[i];
		const char *eq = memchr(tk.p, '=', tk.n);
		if (!eq)
			return perr(P, "on: '%s' is not a selector (expected KEY=VALUES or KEY!=VALUES)", show(s, tk));
		int neg = eq > tk.p && eq[-1] == '!';
		struct span k = {tk.p, (size_t)(eq - tk.p) - (size_t)neg}, v = {eq + 1, tk.n - (size_t)(eq - tk.p) - 1};
		int key = choice(k, keys);
		if (key < 0)
			return perr(P, "on: unknown key '%s' (expected rank, ranks, tp, cp, ep, dp, pp)", show(s, k));
		int dim = key <= 1 ? -1 : key - 2;
		if (seen[dim + 1])
			return perr(P, "on: %s given twice", dim < 0 ? "rank" : dim_names[dim]);
		seen[dim + 1] = 1;
		int f, n;
		char kw[16];
		snprintf(kw, sizeof kw, "%s%s=", keys[key], neg ? "!" : "");
		if (parse_list(P, "on", kw, dim < 0 ? NULL : dim_names[dim], v, dim < 0 ? t->ranks : t->size[dim], &f,
		               &n))
			return -1;
		struct sel *sv = grow(t->sels, &t->scap, t->nsels + 1, sizeof *sv);
		if (!sv)
			return oom(P);
		t->sels = sv;
		t->sels[t->nsels++] = (struct sel){dim, neg, f, n};
	}
	struct selset *ss = grow(t->selsets, &t->sscap, t->nselsets + 1, sizeof *ss);
	if (!ss)
		return oom(P);
	t->selsets = ss;
	t->selsets[t->nselsets] = (struct selset){first, t->nsels - first};
	return open_block(P, N_ON, t->nselsets++, 1, -1);
}

/* stream=, id=, after= of an op line into ev. */
static int sched(struct parser *P, const char *stmt, struct span stream, struct span id, struct span after,
                 struct tr_event *ev)
{
	struct trace *t = P->t;
	char s[SHOW_MAX + 4];
	ev->stream = 0;
	ev->label = -1;
	ev->nafter = 0;
	if (stream.p) {
		if (!name_ok(stream))
			return bad_name(P, stmt, "stream=", stream);
		int i = names_find(&t->streams, stream.p, stream.n);
		if (i < 0 && (i = names_add(&t->streams, stream.p, stream.n, P->line)) < 0)
			return oom(P);
		ev->stream = i;
	}
	if (after.p) { /* before id=: a line's own id= is not earlier than itself */
		const char *p = after.p, *end = after.p + after.n;
		int count = 0;
		while (p <= end) {
			const char *c = memchr(p, ',', (size_t)(end - p));
			struct span item = {p, (size_t)((c ? c : end) - p)};
			p = (c ? c : end) + 1;
			if (!name_ok(item))
				return bad_name(P, stmt, "after= label ", item);
			if (++count > TR_MAX_AFTER)
				return perr(P, "%s: after= lists more than %d labels", stmt, TR_MAX_AFTER);
			int l = names_find(&t->labels, item.p, item.n);
			if (l < 0) {
				int later = later_line(P, 0, item);
				show(s, item);
				if (later)
					return perr(P,
					            "after=%s: no op before line %d has id=%s; the op at line %d comes "
					            "later, and waiting forward would allow a cycle of after= edges "
					            "(after= waits only for ops issued earlier)",
					            s, P->line, s, later);
				return perr(
				    P,
				    "after=%s: no op before line %d has id=%s (after= waits only for ops issued "
				    "earlier, so edges cannot form a cycle)",
				    s, P->line, s);
			}
			int dup = 0;
			for (int j = 0; j < ev->nafter; j++)
				dup |= ev->after[j] == l;
			if (!dup)
				ev->after[ev->nafter++] = l;
		}
	}
	if (id.p) {
		if (!name_ok(id))
			return bad_name(P, stmt, "id=", id);
		int i = names_find(&t->labels, id.p, id.n);
		if (i < 0 && (i = names_add(&t->labels, id.p, id.n, P->line)) < 0)
			return oom(P);
		ev->label = i;
	}
	return 0;
}

static int add_event(struct parser *P, const struct evnode *en)
{
	struct trace *t = P->t;
	struct evnode *v = grow(t->evs, &t->ecap, t->nevs + 1, sizeof *v);
	if (!v)
		return oom(P);
	t->evs = v;
	t->evs[t->nevs] = *en;
	t->evs[t->nevs].ev.line = P->line;
	if (add_node(P, (struct node){N_EVENT, P->line, t->nevs, -1, 1}))
		return -1;
	t->nevs++;
	return 0;
}

static void init_event(struct evnode *en, enum tr_kind kind)
{
	memset(en, 0, sizeof *en);
	en->ev.kind = kind;
	en->ev.label = -1;
	en->ev.algo = TR_ALGO_AUTO;
	en->ev.coll = CO_ALLREDUCE;
	en->peer_dim = PEER_ABS;
}

static int st_op(struct parser *P)
{
	static const char *const extra[] = {"stream", "after", "id", NULL};
	char opwhy[256];
	struct evnode en;
	init_event(&en, TK_OP);
	if (op_parse(P->buf, extra, &en.ev.op, opwhy, sizeof opwhy))
		return perr(P, "%s", opwhy);
	struct span v[3] = {{NULL, 0}, {NULL, 0}, {NULL, 0}};
	const char *kn = op_kind_name(en.ev.op.kind);
	for (int i = 1; i < P->ntok; i++) {
		struct span tk = P->tok[i];
		const char *eq = memchr(tk.p, '=', tk.n);
		if (!eq)
			continue; /* op_parse refused those */
		struct span k = {tk.p, (size_t)(eq - tk.p)};
		int idx = choice(k, extra);
		if (idx < 0)
			continue;
		if (v[idx].p)
			return perr(P, "%s: %s= given twice", kn, extra[idx]);
		if (tk.n == k.n + 1)
			return perr(P, "%s: %s= has no value", kn, extra[idx]);
		v[idx] = (struct span){eq + 1, tk.n - k.n - 1};
	}
	if (sched(P, kn, v[0], v[2], v[1], &en.ev))
		return -1;
	return add_event(P, &en);
}

/* An MoE dispatch's routing (struct tr_route): v holds topk=, experts=,
   groups=, group_topk= in that order. */
static int route_keys(struct parser *P, const char *stmt, int size, const struct span *v, struct tr_route *r)
{
	static const char *const names[] = {"topk", "experts", "groups", "group_topk"};
	static const long long most[] = {256, 65536, 65536, 65536}; /* bound the replay's work (coll/direct.c) */
	long long x[4] = {0, 0, 1, 1};
	char s[SHOW_MAX + 4];
	if (!v[0].p || !v[1].p)
		return perr(P,
		            "%s: an MoE dispatch needs both topk= and experts= (groups= and group_topk= are optional)",
		            stmt);
	if (!v[2].p != !v[3].p)
		return perr(P, "%s: groups= and group_topk= go together (group-limited routing)", stmt);
	for (int i = 0; i < 4; i++)
		if (v[i].p && (parse_uint(v[i], most[i], &x[i]) || x[i] < 1))
			return perr(P, "%s: %s=%s must be a positive integer, at most %lld", stmt, names[i],
			            show(s, v[i]), most[i]);
	if (x[1] % size)
		return perr(P, "%s: experts=%lld must be a multiple of the group size %d (each member holds as many)",
		            stmt, x[1], size);
	if (x[1] % x[2])
		return perr(P, "%s: groups=%lld must divide experts=%lld", stmt, x[2], x[1]);
	if (x[3] > x[2])
		return perr(P, "%s: group_topk=%lld must be at most groups=%lld", stmt, x[3], x[2]);
	if (x[0] > x[3] * (x[1] / x[2]))
		return perr(P, "%s: topk=%lld is more experts than the %lld of group_topk=%lld groups", stmt, x[0],
		            x[3] * (x[1] / x[2]), x[3]);
	*r = (struct tr_route){(int)x[0], (int)x[1], (int)x[2], (int)x[3]};
	return 0;
}

static int st_coll(struct parser *P)
{
	static const char *const keys[] = {"op",     "comm",       "bytes",  "algo", "root",  "topk", "experts",
	                                   "groups", "group_topk", "stream", "id",   "after", NULL};
	enum { K_OP, K_COMM, K_BYTES, K_ALGO, K_ROOT, K_TOPK, K_EXPERTS, K_GROUPS, K_GTOPK, K_STREAM, K_ID, K_AFTER };
	struct trace *t = P->t;
	char s[SHOW_MAX + 4], list[160];
	struct span v[12];
	struct evnode en;
	init_event(&en, TK_COLL);
	if (parse_keys(P, "coll", 1, P->ntok, keys, v))
		return -1;
	choice_list(list, sizeof list, coll_names);
	if (!v[K_OP].p)
		return perr(P, "coll: missing op= (expected %s)", list);
	int op = choice(v[K_OP], coll_names);
	if (op < 0)
		return perr(P, "coll: op=%s is not one of %s", show(s, v[K_OP]), list);
	en.ev.coll = (enum tr_coll)op;
	char stmt[48];
	snprintf(stmt, sizeof stmt, "coll op=%s", coll_names[op]);
	if (!v[K_COMM].p)
		return perr(P, "%s: missing comm= (world, tp, cp, ep, dp, pp or a comm name)", stmt);
	int c = names_find(&t->commnames, v[K_COMM].p, v[K_COMM].n);
	if (c < 0)
		return perr(P,
		            "%s: comm=%s is not a communicator (world, tp, cp, ep, dp, pp or one a comm line defines "
		            "earlier)",
		            stmt, show(s, v[K_COMM]));
	en.ev.comm = c;
	if (v[K_BYTES].p && parse_bytes(P, stmt, v[K_BYTES], &en.ev.bytes))
		return -1;
	if (op == CO_BARRIER && en.ev.bytes > 0)
		return perr(P, "%s moves no data: leave out bytes= (or write bytes=0)", stmt);
	if (op != CO_BARRIER && !v[K_BYTES].p)
		return perr(P, "%s: missing bytes=", stmt);
	if (op != CO_BARRIER && en.ev.bytes <= 0)
		return perr(P, "%s: bytes=%s must be positive (only op=barrier moves no data)", stmt,
		            show(s, v[K_BYTES]));
	if (v[K_ALGO].p && !(v[K_ALGO].n == 4 && !memcmp(v[K_ALGO].p, "auto", 4))) {
		/* kept as written: the simulator knows which algorithms exist */
		if (!name_ok(v[K_ALGO]))
			return bad_name(P, stmt, "algo=", v[K_ALGO]);
		int a = names_find(&t->algos, v[K_ALGO].p, v[K_ALGO].n);
		if (a < 0 && (a = names_add(&t->algos, v[K_ALGO].p, v[K_ALGO].n, P->line)) < 0)
			return oom(P);
		en.ev.algo = a;
	}
	if (v[K_ROOT].p) {
		if (op != CO_BROADCAST && op != CO_REDUCE)
			return perr(P, "%s: root= applies only to op=broadcast|reduce", stmt);
		long long r;
		if (parse_uint(v[K_ROOT], TR_MAX_RANKS, &r))
			return perr(P, "%s: root=%s must be a non-negative integer", stmt, show(s, v[K_ROOT]));
		int size = comm_size(t, c); /* every group of a communicator has this size */
		if (r >= size)
			return perr(P, "%s: root=%lld must be below the size of the group (comm %s has %d ranks)", stmt,
			            r, names_get(&t->commnames, c), size);
		en.ev.root = (int)r;
	}
	if (v[K_TOPK].p || v[K_EXPERTS].p || v[K_GROUPS].p || v[K_GTOPK].p) {
		if (op != CO_ALLTOALL)
			return perr(P, "%s: topk=, experts=, groups= and group_topk= apply only to op=alltoall", stmt);
		if (route_keys(P, stmt, comm_size(t, c), v + K_TOPK, &en.ev.route))
			return -1;
	}
	if (sched(P, stmt, v[K_STREAM], v[K_ID], v[K_AFTER], &en.ev))
		return -1;
	return add_event(P, &en);
}

static int st_p2p(struct parser *P, enum tr_kind kind)
{
	static const char *const keys[] = {"peer", "bytes", "tag", "stream", "id", "after", NULL};
	static const char *const peer_dims[] = {"tp", "cp", "ep", "dp", "pp", "rank", NULL};
	enum { K_PEER, K_BYTES, K_TAG, K_STREAM, K_ID, K_AFTER };
	struct trace *t = P->t;
	const char *stmt = kind == TK_SEND ? "send" : "recv";
	char s[SHOW_MAX + 4];
	struct span v[6];
	struct evnode en;
	init_event(&en, kind);
	if (parse_keys(P, stmt, 1, P->ntok, keys, v))
		return -1;
	if (!v[K_PEER].p)
		return perr(P, "%s: missing peer= (a rank, or DIM+K / DIM-K with DIM rank|tp|cp|ep|dp|pp)", stmt);
	struct span pv = v[K_PEER];
	show(s, pv);
	long long x;
	int r = parse_uint(pv, (long long)INT_MAX, &x);
	if (r == 0 || r == -2) {
		if (r == -2 || x >= t->ranks)
			return perr(P, "%s: peer=%s is out of range (ranks %d: 0-%d)", stmt, s, t->ranks, t->ranks - 1);
		en.ev.peer = (int)x;
	} else {
		size_t i = 0;
		while (i < pv.n && pv.p[i] != '+' && pv.p[i] != '-')
			i++;
		int d = choice((struct span){pv.p, i}, peer_dims);
		if (d < 0 || i == pv.n)
			return perr(P, "%s: peer=%s: expected a rank, or DIM+K / DIM-K with DIM rank|tp|cp|ep|dp|pp",
			            stmt, s);
		int size = d == DIM_COUNT ? t->ranks : t->size[d];
		r = parse_uint((struct span){pv.p + i + 1, pv.n - i - 1}, (long long)INT_MAX, &x);
		if (r == -1)
			return perr(P, "%s: peer=%s: expected a rank, or DIM+K / DIM-K with DIM rank|tp|cp|ep|dp|pp",
			            stmt, s);
		if (r == 0 && x == 0)
			return perr(P, "%s: peer=%s is the rank itself (a %s needs another rank)", stmt, s, stmt);
		if (r == -2 || x >= size)
			return perr(P, "%s: peer=%s is out of range for every rank (%s has %d: 0-%d)", stmt, s,
			            peer_dims[d], size, size - 1);
		en.peer_dim = d == DIM_COUNT ? PEER_RANK : d;
		en.peer_k = pv.p[i] == '-' ? -x : x;
	}
	if (!v[K_BYTES].p)
		return perr(P, "%s: missing bytes=", stmt);
	if (parse_bytes(P, stmt, v[K_BYTES], &en.ev.bytes))
		return -1;
	if (en.ev.bytes <= 0)
		return perr(P, "%s: bytes=%s must be positive", stmt, show(s, v[K_BYTES]));
	if (v[K_TAG].p) {
		if (parse_uint(v[K_TAG], TAG_MAX, &x))
			return perr(P, "%s: tag=%s must be an integer from 0 to %ld", stmt, show(s, v[K_TAG]), TAG_MAX);
		en.ev.tag = (long)x;
	}
	if (sched(P, stmt, v[K_STREAM], v[K_ID], v[K_AFTER], &en.ev))
		return -1;
	return add_event(P, &en);
}

static int st_delay(struct parser *P)
{
	static const char *const keys[] = {"time", "stream", "id", "after", "scale", "ref", NULL};
	char s[SHOW_MAX + 4];
	struct span v[6];
	struct evnode en;
	init_event(&en, TK_DELAY);
	if (parse_keys(P, "delay", 1, P->ntok, keys, v))
		return -1;
	if (!v[0].p)
		return perr(P, "delay: missing time= (a time such as 5us)");
	if (parse_quantity(P, "delay", "time", v[0], UNIT_TIME, &en.ev.seconds))
		return -1;
	if (!isfinite(en.ev.seconds) || en.ev.seconds < 0)
		return perr(P, "delay: time=%s must not be negative", show(s, v[0]));
	if (!v[4].p != !v[5].p)
		return perr(P, "delay: scale= and ref= go together (scale=dram ref=2TB/s, scale=matrix ref=312TFLOPS)");
	if (v[4].p) {
		int dram = is(v[4], "dram");
		if (!dram && !is(v[4], "matrix"))
			return perr(P, "delay: scale=%s: expected dram or matrix", show(s, v[4]));
		en.ev.scale = dram ? TR_SCALE_DRAM : TR_SCALE_MATRIX;
		if (parse_quantity(P, "delay", "ref", v[5], dram ? UNIT_BANDWIDTH : UNIT_FLOPS, &en.ev.scale_ref))
			return -1;
		if (!isfinite(en.ev.scale_ref) || !(en.ev.scale_ref > 0))
			return perr(P, "delay: ref=%s must be above 0", show(s, v[5]));
	}
	if (sched(P, "delay", v[1], v[2], v[3], &en.ev))
		return -1;
	return add_event(P, &en);
}

static int st_mark(struct parser *P)
{
	static const char *const keys[] = {"name", NULL};
	struct trace *t = P->t;
	struct span v[1];
	struct evnode en;
	init_event(&en, TK_MARK);
	if (parse_keys(P, "mark", 1, P->ntok, keys, v))
		return -1;
	if (!v[0].p)
		return perr(P, "mark: missing name=");
	if (!name_ok(v[0]))
		return bad_name(P, "mark", "name=", v[0]);
	int i = names_find(&t->marks, v[0].p, v[0].n);
	if (i < 0 && (i = names_add(&t->marks, v[0].p, v[0].n, P->line)) < 0)
		return oom(P);
	en.ev.mark = i;
	return add_event(P, &en);
}

static int st_memory(struct parser *P)
{
	struct span v[MEM_COUNT];
	struct evnode en;
	init_event(&en, TK_MEM);
	if (parse_keys(P, "memory", 1, P->ntok, mem_names, v))
		return -1;
	for (int c = 0; c < MEM_COUNT; c++) {
		if (!v[c].p)
			continue;
		if (parse_size(P, "memory", mem_names[c], v[c], &en.ev.mem[c]))
			return -1;
		en.ev.mem_set |= 1u << c;
	}
	if (!en.ev.mem_set)
		return perr(
		    P, "memory: expected at least one of params=, grads=, optimizer=, activations=, kv=, workspace=");
	return add_event(P, &en);
}

/* A plain non-negative decimal number (exponent allowed): model_flops=, tokens=. */
static int parse_count(struct parser *P, const char *stmt, const char *key, struct span v, double max, double *out)
{
	char buf[64], s[SHOW_MAX + 4], *end;
	show(s, v);
	if (v.n == 0 || v.n >= sizeof buf || !(isdigit((unsigned char)v.p[0]) || v.p[0] == '.'))
		return perr(P, "%s: %s=%s: expected a non-negative number such as 3.1e18", stmt, key, s);
	memcpy(buf, v.p, v.n);
	buf[v.n] = '\0';
	errno = 0;
	double x = strtod(buf, &end);
	if (*end || errno || !isfinite(x) || x < 0 || x > max)
		return perr(P, "%s: %s=%s: expected a non-negative number up to %g", stmt, key, s, max);
	*out = x;
	return 0;
}

static int st_workload(struct parser *P)
{
	static const char *const keys[] = {"name", "kind", "model_flops", "tokens", "decode_steps", NULL};
	static const char *const kinds[] = {"train", "infer", NULL};
	struct trace *t = P->t;
	struct tr_workload *w = &t->workload;
	char s[SHOW_MAX + 4], list[64];
	struct span v[5];
	if (t->has_workload)
		return perr(P, "workload given twice (first at line %d)", w->line);
	if (P->depth)
		return perr(P, "workload belongs at the top level (not inside a block)");
	if (P->body_line)
		return perr(P, "workload must come before the first op, comm, def or block (line %d)", P->body_line);
	if (parse_keys(P, "workload", 1, P->ntok, keys, v))
		return -1;
	if (!v[0].p)
		return perr(P, "workload: missing name=");
	if (!name_ok(v[0]))
		return bad_name(P, "workload", "name=", v[0]);
	memcpy(w->name, v[0].p, v[0].n);
	w->name[v[0].n] = '\0';
	w->kind = WK_TRAIN;
	if (v[1].p) {
		int k = 0;
		while (kinds[k] && !is(v[1], kinds[k]))
			k++;
		choice_list(list, sizeof list, kinds);
		if (!kinds[k])
			return perr(P, "workload: kind=%s: expected %s", show(s, v[1]), list);
		w->kind = (enum tr_wkind)k;
	}
	if (v[2].p && parse_count(P, "workload", "model_flops", v[2], 1e30, &w->model_flops))
		return -1;
	if (v[3].p && parse_count(P, "workload", "tokens", v[3], 1e18, &w->tokens))
		return -1;
	if (v[4].p) {
		double n;
		if (parse_count(P, "workload", "decode_steps", v[4], 1e9, &n))
			return -1;
		if (n != floor(n))
			return perr(P, "workload: decode_steps=%s must be a whole number", show(s, v[4]));
		if (w->kind != WK_INFER)
			return perr(P, "workload: decode_steps= belongs to kind=infer");
		w->decode_steps = (long)n;
	}
	w->line = P->line;
	t->has_workload = 1;
	return 0;
}

unsigned tr_symmetric_dims(const struct trace *t)
{
	unsigned mask = 0;
	for (int d = 0; d < DIM_COUNT; d++)
		if (t->size[d] > 1)
			mask |= 1u << d;
	for (int i = 0; i < t->nsels; i++) {
		if (t->sels[i].key < 0)
			return 0; /* rank= picks single ranks */
		mask &= ~(1u << t->sels[i].key);
	}
	for (int i = 0; i < t->commnames.n; i++)
		if (t->comms[i].kind == CK_RANKS)
			return 0;
	for (int i = 0; i < t->nevs; i++) {
		const struct evnode *en = &t->evs[i];
		if (en->ev.kind != TK_SEND && en->ev.kind != TK_RECV)
			continue;
		if (en->peer_dim < 0)
			return 0; /* an absolute peer or rank+K */
		mask &= ~(1u << en->peer_dim);
	}
	return mask;
}

int tr_comm_stream(const struct trace *t, int comm)
{
	int stream = -1;
	for (int i = 0; i < t->nevs; i++) {
		const struct tr_event *ev = &t->evs[i].ev;
		if (ev->kind != TK_COLL || ev->comm != comm)
			continue;
		if (stream >= 0 && ev->stream != stream)
			return -2;
		stream = ev->stream;
	}
	return stream;
}

int tr_p2p_dims(const struct trace *t)
{
	int mask = 0;
	for (int i = 0; i < t->nevs; i++) {
		const struct evnode *en = &t->evs[i];
		if (en->ev.kind != TK_SEND && en->ev.kind != TK_RECV)
			continue;
		if (en->peer_dim < 0)
			return -1;
		mask |= 1 << en->peer_dim;
	}
	return mask;
}

const struct tr_workload *tr_workload(const struct trace *t)
{
	return t && t->has_workload ? &t->workload : NULL;
}

const char *tr_mem_name(enum tr_mem m)
{
	return m >= 0 && m < MEM_COUNT ? mem_names[m] : "?";
}

static int statement(struct parser *P)
{
	char s[SHOW_MAX + 4];
	struct span k = P->tok[0];
	if (!P->header)
		return st_header(P);
	if (is(k, "simtrace"))
		return perr(P, "a second header (simtrace belongs on the first line only)");
	if (is(k, "ranks"))
		return st_ranks(P);
	if (!P->ranks_line)
		return perr(P, "'%s' before 'ranks N' (the rank count comes right after the header)", show(s, k));
	if (is(k, "layout"))
		return st_layout(P);
	if (is(k, "}"))
		return st_close(P);
	if (is(k, "workload"))
		return st_workload(P);
	if (!P->body_line)
		P->body_line = P->line;
	if (is(k, "comm"))
		return st_comm(P);
	if (is(k, "def"))
		return st_def(P);
	if (is(k, "call"))
		return st_call(P);
	if (is(k, "repeat"))
		return st_repeat(P);
	if (is(k, "on"))
		return st_on(P);
	if (is(k, "coll"))
		return st_coll(P);
	if (is(k, "send"))
		return st_p2p(P, TK_SEND);
	if (is(k, "recv"))
		return st_p2p(P, TK_RECV);
	if (is(k, "delay"))
		return st_delay(P);
	if (is(k, "mark"))
		return st_mark(P);
	if (is(k, "memory"))
		return st_memory(P);
	for (int i = 0; i < OP_KIND_COUNT; i++)
		if (is(k, op_kind_name((enum op_kind)i)))
			return st_op(P);
	return perr(
	    P,
	    "unknown statement '%s' (expected gemm|attn|elem|copy|conv|embedding|coll|send|recv|delay|mark|memory, "
	    "repeat, on, def, call, comm, layout, workload or '}')",
	    show(s, k));
}

static int init_trace(struct trace *t, const char *name)
{
	t->path = strdup(name);
	if (!t->path)
		return -1;
	for (int d = 0; d < DIM_COUNT; d++) {
		t->size[d] = 1;
		t->stride[d] = 1;
		t->order[d] = d;
	}
	if (names_add(&t->streams, "0", 1, 0) < 0)
		return -1;
	static const char *const builtin[] = {"world", "tp", "cp", "ep", "dp", "pp"};
	t->comms = calloc(8, sizeof *t->comms);
	if (!t->comms)
		return -1;
	t->ccap = 8;
	for (int i = 0; i < 6; i++) {
		t->comms[i] = (struct comm){i ? CK_DIMS : CK_WORLD, i ? 1u << (i - 1) : 0, NULL, 0, 0};
		if (names_add(&t->commnames, builtin[i], strlen(builtin[i]), 0) < 0)
			return -1;
	}
	return 0;
}

static struct trace *parse(const char *text, const char *name, char *why, size_t whylen)
{
	if (why && whylen)
		why[0] = '\0';
	if (!name)
		name = "trace";
	if (!text) {
		tr_fail_at(why, whylen, name, 0, "no text");
		return NULL;
	}
	struct trace *t = calloc(1, sizeof *t);
	struct parser *P = calloc(1, sizeof *P);
	if (!t || !P || init_trace(t, name)) {
		tr_fail_at(why, whylen, name, 0, "out of memory");
		goto fail;
	}
	P->t = t;
	P->name = name;
	P->why = why;
	P->whylen = whylen;
	P->next = text;
	if (new_block(P) < 0) {
		oom(P);
		goto fail;
	}
	P->blk[0] = 0;
	P->bdef[0] = -1;
	for (;;) {
		int r = read_line(P);
		if (r < 0)
			goto fail;
		if (r == 0)
			break;
		if (P->ntok && statement(P))
			goto fail;
	}
	if (P->line == 0)
		P->line = 1;
	if (!P->header) {
		perr(P, "empty trace: expected the header 'simtrace 1'");
		goto fail;
	}
	if (P->depth) {
		perr(P, "unexpected end of file: the block opened at line %d is not closed by '}'", P->bline[P->depth]);
		goto fail;
	}
	if (!P->ranks_line) {
		perr(P, "missing 'ranks N' (how many ranks run the trace) after the header");
		goto fail;
	}
	t->height = P->height[0];
	free(P);
	return t;
fail:
	free(P);
	tr_free(t);
	return NULL;
}

struct trace *tr_parse_string(const char *text, const char *name, char *why, size_t whylen)
{
	return parse(text, name, why, whylen);
}

struct trace *tr_load(const char *path, long long max_bytes, int *exit_code, char *why, size_t whylen)
{
	int dummy;
	if (!exit_code)
		exit_code = &dummy;
	*exit_code = 66;
	if (why && whylen)
		why[0] = '\0';
	if (!path) {
		tr_fail_at(why, whylen, "trace", 0, "no path");
		return NULL;
	}
	if (max_bytes <= 0)
		max_bytes = TR_MAX_BYTES;
	FILE *f = fopen(path, "rb");
	if (!f) {
		tr_fail_at(why, whylen, path, 0, "cannot read: %s", strerror(errno));
		return NULL;
	}
	size_t cap = 1 << 16, n = 0;
	char *buf = malloc(cap);
	for (;;) {
		if (!buf) {
			fclose(f);
			*exit_code = 70;
			tr_fail_at(why, whylen, path, 0, "out of memory");
			return NULL;
		}
		size_t got = fread(buf + n, 1, cap - n - 1, f);
		const char *nul = memchr(buf + n, '\0', got);
		n += got;
		if (nul) { /* refused as soon as seen: /dev/zero is not read to the end */
			int line = 1;
			for (const char *p = buf; p < nul; p++)
				line += *p == '\n';
			fclose(f);
			free(buf);
			*exit_code = 65;
			tr_fail_at(why, whylen, path, line, "a NUL byte: this is not a text trace");
			return NULL;
		}
		if ((long long)n > max_bytes) {
			fclose(f);
			free(buf);
			*exit_code = 65;
			tr_fail_at(why, whylen, path, 0,
			           "larger than %lld bytes, the most a trace may have (--max-trace-bytes)", max_bytes);
			return NULL;
		}
		if (n < cap - 1)
			break;
		char *nb = cap > SIZE_MAX / 2 ? NULL : realloc(buf, cap * 2);
		if (!nb)
			free(buf);
		buf = nb;
		cap *= 2;
	}
	int err = ferror(f);
	fclose(f);
	if (err) {
		free(buf);
		tr_fail_at(why, whylen, path, 0, "cannot read: read error");
		return NULL;
	}
	buf[n] = '\0';
	*exit_code = 65;
	struct trace *t = parse(buf, path, why, whylen);
	free(buf);
	if (t)
		*exit_code = 0;
	return t;
}
