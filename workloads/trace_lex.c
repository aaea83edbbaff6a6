/*
 * trace_lex.c -- the trace parser's primitives (trace_parse.h): messages,
 * lines and tokens, values (sizes, quantities, rank lists, key=value
 * arguments), the format's words, the interned name tables, and the blocks
 * and nodes of the tree. It calls nothing else of the parser.
 */
#include "trace_parse.h"

#include <ctype.h>
#include <errno.h>
#include <limits.h>
#include <math.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

const char *const tp_dim_names[DIM_COUNT + 1] = {"tp", "cp", "ep", "dp", "pp", NULL};
const char *const tp_coll_names[CO_COUNT + 1] = {"allreduce", "allgather", "reducescatter", "alltoall", "broadcast",
                                                 "reduce",    "barrier",   "shift",         NULL};
const char *const tp_mem_names[MEM_COUNT + 1] = {"params", "grads",     "optimizer", "activations",
                                                 "kv",     "workspace", NULL};
_Static_assert(sizeof tp_dim_names / sizeof tp_dim_names[0] == DIM_COUNT + 1, "one name per enum tr_dim, then NULL");
_Static_assert(sizeof tp_coll_names / sizeof tp_coll_names[0] == CO_COUNT + 1, "one name per enum tr_coll, then NULL");

/* ---- growing arrays ---- */

/* Makes room for need elements; NULL (v untouched) when memory runs out. */
void *tp_grow(void *v, int *cap, int need, size_t elem)
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

int tp_names_find(const struct names *t, const char *p, size_t n)
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
int tp_names_add(struct names *t, const char *p, size_t n, int line)
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

void tp_names_free(struct names *t)
{
	for (int i = 0; i < t->n; i++)
		free(t->s[i]);
	free(t->s);
	free(t->line);
	free(t->ht);
}
/* ---- messages ---- */

int tp_is(struct span s, const char *word)
{
	return strlen(word) == s.n && memcmp(s.p, word, s.n) == 0;
}

/* A token as quoted in a message: at most SHOW_MAX characters, unprintable
   bytes as '?', "..." when cut. */
const char *tp_show(char out[SHOW_MAX + 4], struct span s)
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

#if defined(__GNUC__)
__attribute__((format(printf, 2, 3)))
#endif
int
tp_perr(struct parser *P, const char *fmt, ...)
{
	char msg[TR_MSG_MAX];
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(msg, sizeof msg, fmt, ap);
	va_end(ap);
	return tr_fail_at(P->why, P->whylen, P->name, P->line, "%s", msg);
}

int tp_oom(struct parser *P)
{
	return tp_perr(P, "out of memory");
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
int tp_read_line(struct parser *P)
{
	const char *p = P->next;
	if (!*p)
		return 0;
	const char *e = strchr(p, '\n');
	size_t n = e ? (size_t)(e - p) : strlen(p);
	P->next = e ? e + 1 : p + n;
	P->line++;
	if (n > LINE_CHARS)
		return tp_perr(P, "line is longer than %d characters", LINE_CHARS);
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
int tp_later_line(const struct parser *P, int def, struct span name)
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
			if (def && nt >= 2 && tp_is(tok[0], "def") && tok[1].n == name.n &&
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

int tp_name_ok(struct span v)
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

int tp_bad_name(struct parser *P, const char *stmt, const char *what, struct span v)
{
	char s[SHOW_MAX + 4];
	return tp_perr(P, "%s: %s'%s' is not a name (1 to %d letters, digits, '_', '.' or '-')", stmt, what,
	               tp_show(s, v), NAME_CHARS);
}

/* Plain decimal digits up to max. 0 ok, -1 malformed, -2 above max. */
int tp_parse_uint(struct span v, long long max, long long *out)
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

int tp_choice(struct span v, const char *const *names)
{
	for (int i = 0; names[i]; i++)
		if (tp_is(v, names[i]))
			return i;
	return -1;
}

void tp_choice_list(char *buf, size_t len, const char *const *names)
{
	buf[0] = '\0';
	for (int i = 0; names[i]; i++) {
		strncat(buf, i ? "|" : "", len - strlen(buf) - 1);
		strncat(buf, names[i], len - strlen(buf) - 1);
	}
}

/* A size (bytes=, memory params=): a plain number of bytes or a quantity
   with a byte unit; whole, zero or more, below 2^62. */
int tp_parse_size(struct parser *P, const char *stmt, const char *key, struct span v, double *out)
{
	char buf[128], s[SHOW_MAX + 4], uwhy[256];
	double x = 0;
	tp_show(s, v);
	if (v.n >= sizeof buf)
		return tp_perr(P, "%s: %s=%s is too long for a quantity", stmt, key, s);
	memcpy(buf, v.p, v.n);
	buf[v.n] = '\0';
	if (units_parse(buf, UNIT_NONE, &x, uwhy, sizeof uwhy) && units_parse(buf, UNIT_BYTES, &x, uwhy, sizeof uwhy))
		return tp_perr(P, "%s: %s=%s: %s", stmt, key, s, uwhy);
	if (!isfinite(x) || x < 0)
		return tp_perr(P, "%s: %s=%s must not be negative", stmt, key, s);
	if (x != floor(x))
		return tp_perr(P, "%s: %s=%s is not a whole number of bytes", stmt, key, s);
	if (x >= BYTES_LIMIT)
		return tp_perr(P, "%s: %s=%s is too large (must be below 2^62 bytes)", stmt, key, s);
	*out = x;
	return 0;
}

/* A quantity of one kind of unit (delay time=, ref=), as units_parse reads it. */
int tp_parse_quantity(struct parser *P, const char *stmt, const char *key, struct span v, enum unit_kind kind,
                      double *out)
{
	char buf[128], s[SHOW_MAX + 4], uwhy[256];
	tp_show(s, v);
	if (v.n >= sizeof buf)
		return tp_perr(P, "%s: %s=%s is too long for a quantity", stmt, key, s);
	memcpy(buf, v.p, v.n);
	buf[v.n] = '\0';
	if (units_parse(buf, kind, out, uwhy, sizeof uwhy))
		return tp_perr(P, "%s: %s=%s: %s", stmt, key, s, uwhy);
	return 0;
}

int tp_parse_bytes(struct parser *P, const char *stmt, struct span v, double *out)
{
	return tp_parse_size(P, stmt, "bytes", v, out);
}

int tp_cmp_ival(const void *a, const void *b)
{
	const struct ival *x = a, *y = b;
	return x->lo != y->lo ? (x->lo < y->lo ? -1 : 1) : (x->hi < y->hi ? -1 : x->hi > y->hi);
}

/* A list of ranks or coordinates: N, A-B, last (= size-1) or A-last, comma
   separated; every value below size. Appended to t->ivals. key is the key
   as written with its operator ("ranks=", "pp!="); dim names the layout dim,
   NULL for rank numbers. */
int tp_parse_list(struct parser *P, const char *stmt, const char *key, const char *dim, struct span v, int size,
                  int *first, int *count)
{
	struct trace *t = P->t;
	char s[SHOW_MAX + 4], it[SHOW_MAX + 4];
	tp_show(s, v);
	*first = t->nivals;
	*count = 0;
	if (v.n == 0)
		return tp_perr(P, "%s: %s has no value", stmt, key);
	const char *p = v.p, *end = v.p + v.n;
	while (p <= end) {
		const char *c = memchr(p, ',', (size_t)(end - p));
		struct span item = {p, (size_t)((c ? c : end) - p)};
		p = (c ? c : end) + 1;
		if (item.n == 0)
			return tp_perr(P, "%s: %s%s has an empty item (expected N, A-B or last, separated by ',')",
			               stmt, key, s);
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
			if (tp_is(part[k], "last")) {
				x[k] = size - 1;
				continue;
			}
			int r = tp_parse_uint(part[k], (long long)INT_MAX, &x[k]);
			if (r == -1)
				return tp_perr(P, "%s: %s%s: '%s' is not a number, a range A-B or 'last'", stmt, key, s,
				               tp_show(it, item));
			if (r == -2 || x[k] >= size) {
				tp_show(it, part[k]);
				if (!dim)
					return tp_perr(P, "%s: %s%s: rank %s is out of range (ranks %d: 0-%d)", stmt,
					               key, s, it, size, size - 1);
				return tp_perr(P, "%s: %s%s: %s is out of range (the layout has %s=%d: 0-%d)", stmt,
				               key, s, it, dim, size, size - 1);
			}
		}
		if (x[0] > x[1])
			return tp_perr(P, "%s: %s%s: the range %s runs backwards", stmt, key, s, tp_show(it, item));
		struct ival *iv = tp_grow(t->ivals, &t->icap, t->nivals + 1, sizeof *iv);
		if (!iv)
			return tp_oom(P);
		t->ivals = iv;
		t->ivals[t->nivals++] = (struct ival){(int)x[0], (int)x[1]};
		(*count)++;
	}
	return 0;
}

/* key=value arguments from token `from` on, against a NULL-terminated list of
   keys; vals[i].p is NULL for a key not given. */
int tp_parse_keys(struct parser *P, const char *stmt, int from, int to, const char *const *keys, struct span *vals)
{
	char s[SHOW_MAX + 4];
	for (int i = 0; keys[i]; i++)
		vals[i] = (struct span){NULL, 0};
	for (int i = from; i < to; i++) {
		struct span tk = P->tok[i];
		const char *eq = memchr(tk.p, '=', tk.n);
		if (!eq)
			return tp_perr(P, "%s: '%s' is not key=value", stmt, tp_show(s, tk));
		struct span k = {tk.p, (size_t)(eq - tk.p)}, v = {eq + 1, tk.n - k.n - 1};
		if (k.n == 0)
			return tp_perr(P, "%s: '%s' has no key before '='", stmt, tp_show(s, tk));
		int idx = tp_choice(k, keys);
		if (idx < 0) {
			char list[256] = "";
			for (int j = 0; keys[j]; j++) {
				strncat(list, j ? ", " : "", sizeof list - strlen(list) - 1);
				strncat(list, keys[j], sizeof list - strlen(list) - 1);
			}
			return tp_perr(P, "%s: unknown key '%s' (expected %s)", stmt, tp_show(s, k), list);
		}
		if (vals[idx].p)
			return tp_perr(P, "%s: %s= given twice", stmt, keys[idx]);
		if (v.n == 0)
			return tp_perr(P, "%s: %s= has no value", stmt, keys[idx]);
		vals[idx] = v;
	}
	return 0;
}

/* ---- blocks and nodes ---- */

int tp_new_block(struct parser *P)
{
	struct trace *t = P->t;
	struct block *b = tp_grow(t->blocks, &t->bcap, t->nblocks + 1, sizeof *b);
	if (!b)
		return -1;
	t->blocks = b;
	t->blocks[t->nblocks] = (struct block){NULL, 0, 0};
	return t->nblocks++;
}

int tp_add_node(struct parser *P, struct node nd)
{
	struct block *b = &P->t->blocks[P->blk[P->depth]];
	struct node *v = tp_grow(b->v, &b->cap, b->n + 1, sizeof *v);
	if (!v)
		return tp_oom(P);
	b->v = v;
	b->v[b->n++] = nd;
	return 0;
}

/* Opens a block; a node in the current block points to it unless it is a
   def's body (def >= 0). */
int tp_open_block(struct parser *P, int type, int arg, long long count, int def)
{
	if (P->depth + 1 > MAX_DEPTH)
		return tp_perr(P, "blocks nest deeper than %d (this '{' opens level %d)", MAX_DEPTH, P->depth + 1);
	int b = tp_new_block(P);
	if (b < 0)
		return tp_oom(P);
	if (def < 0 && tp_add_node(P, (struct node){type, P->line, arg, b, count}))
		return -1;
	P->depth++;
	P->blk[P->depth] = b;
	P->bline[P->depth] = P->line;
	P->bdef[P->depth] = def;
	P->height[P->depth] = 0;
	return 0;
}

void tp_raise_height(struct parser *P, int h)
{
	if (h > P->height[P->depth])
		P->height[P->depth] = h;
}

int tp_add_event(struct parser *P, const struct evnode *en)
{
	struct trace *t = P->t;
	struct evnode *v = tp_grow(t->evs, &t->ecap, t->nevs + 1, sizeof *v);
	if (!v)
		return tp_oom(P);
	t->evs = v;
	t->evs[t->nevs] = *en;
	t->evs[t->nevs].ev.line = P->line;
	if (tp_add_node(P, (struct node){N_EVENT, P->line, t->nevs, -1, 1}))
		return -1;
	t->nevs++;
	return 0;
}

void tp_init_event(struct evnode *en, enum tr_kind kind)
{
	memset(en, 0, sizeof *en);
	en->ev.kind = kind;
	en->ev.label = -1;
	en->ev.algo = TR_ALGO_AUTO;
	en->ev.coll = CO_ALLREDUCE;
	en->peer_dim = PEER_ABS;
}

/* A plain non-negative decimal number (exponent allowed): model_flops=, tokens=. */
int tp_parse_count(struct parser *P, const char *stmt, const char *key, struct span v, double max, double *out)
{
	char buf[64], s[SHOW_MAX + 4], *end;
	tp_show(s, v);
	if (v.n == 0 || v.n >= sizeof buf || !(isdigit((unsigned char)v.p[0]) || v.p[0] == '.'))
		return tp_perr(P, "%s: %s=%s: expected a non-negative number such as 3.1e18", stmt, key, s);
	memcpy(buf, v.p, v.n);
	buf[v.n] = '\0';
	errno = 0;
	double x = strtod(buf, &end);
	if (*end || errno || !isfinite(x) || x < 0 || x > max)
		return tp_perr(P, "%s: %s=%s: expected a non-negative number up to %g", stmt, key, s, max);
	*out = x;
	return 0;
}
