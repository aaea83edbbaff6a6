/*
 * chakra.c -- reads one rank of a Chakra execution trace: the protobuf
 * stream Chakra's tools write (each message preceded by its length as a
 * varint: a GlobalMetadata, then one Node per node), decoded with
 * protobuf-c from the schema in et_def.proto; then resolves the nodes'
 * dependencies and orders them (chakra_int.h states the invariants).
 *
 * Work and memory are bounded by the file's size (--max-bytes) and its node
 * count (--max-events); the graph is sorted once and walked once (Kahn's
 * algorithm with the file's order breaking ties).
 */
#include "arch.h"
#include "chakra_int.h"
#include "et_def.pb-c.h"
#include "import_int.h"

#include <jansson.h>

#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

#define DEFAULT_MAX_NODES 20000000LL

static int fail(char *why, size_t whylen, int code, const char *fmt, ...) __attribute__((format(printf, 4, 5)));
static int fail(char *why, size_t whylen, int code, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(why, whylen, fmt, ap);
	va_end(ap);
	imp_one_line(why);
	return code;
}

/* A varint at data[*at..len); 0, or -1 when it runs past the end or past 64
   bits. */
static int varint(const unsigned char *data, size_t len, size_t *at, uint64_t *v)
{
	uint64_t x = 0;
	for (int shift = 0; shift < 64; shift += 7) {
		if (*at >= len)
			return -1;
		unsigned char c = data[(*at)++];
		x |= (uint64_t)(c & 0x7f) << shift;
		if (!(c & 0x80)) {
			*v = x;
			return 0;
		}
	}
	return -1;
}

/* The versions of Chakra's schema this reader knows: GlobalMetadata.version
   as Chakra's tools write it (0.0.4), or empty (the PyTorch converter of
   2023-2024 leaves it so and records the host trace's schema as an attr). */
static int known_version(const char *v)
{
	return !v || !*v || !strcmp(v, "0.0.4");
}

static char *dup_or_null(const char *s)
{
	return s && *s ? strdup(s) : NULL;
}

/* Control characters (a newline would end a line of the job, or of a
   message) become '?'. */
static char *printable(char *s)
{
	for (char *p = s; p && *p; p++)
		if ((unsigned char)*p < 0x20 || *p == 0x7f)
			*p = '?';
	return s;
}

static int attr_int(const ChakraProtoMsg__AttributeProto *a, long long *v)
{
	switch (a->value_case) {
	case CHAKRA_PROTO_MSG__ATTRIBUTE_PROTO__VALUE_INT32_VAL: *v = a->int32_val; return 1;
	case CHAKRA_PROTO_MSG__ATTRIBUTE_PROTO__VALUE_INT64_VAL: *v = a->int64_val; return 1;
	case CHAKRA_PROTO_MSG__ATTRIBUTE_PROTO__VALUE_UINT32_VAL: *v = a->uint32_val; return 1;
	case CHAKRA_PROTO_MSG__ATTRIBUTE_PROTO__VALUE_UINT64_VAL:
		*v = a->uint64_val > (uint64_t)INT64_MAX ? -1 : (long long)a->uint64_val;
		return 1;
	case CHAKRA_PROTO_MSG__ATTRIBUTE_PROTO__VALUE_SINT32_VAL: *v = a->sint32_val; return 1;
	case CHAKRA_PROTO_MSG__ATTRIBUTE_PROTO__VALUE_SINT64_VAL: *v = a->sint64_val; return 1;
	case CHAKRA_PROTO_MSG__ATTRIBUTE_PROTO__VALUE_BOOL_VAL: *v = a->bool_val; return 1;
	default: return 0;
	}
}

/* The attributes this importer reads (Chakra's PyTorch converter and
   ASTRA-sim's feeder name them so). */
static void read_attrs(const ChakraProtoMsg__Node *m, struct chk_node *n)
{
	int has_stream = 0;
	for (size_t i = 0; i < m->n_attr; i++) {
		const ChakraProtoMsg__AttributeProto *a = m->attr[i];
		const char *k = a->name ? a->name : "";
		long long v;
		if (!strcmp(k, "pg_name") && a->value_case == CHAKRA_PROTO_MSG__ATTRIBUTE_PROTO__VALUE_STRING_VAL) {
			if (a->string_val && *a->string_val && !n->pg)
				n->pg = printable(strdup(a->string_val));
		} else if (!strcmp(k, "involved_dim") &&
		           a->value_case == CHAKRA_PROTO_MSG__ATTRIBUTE_PROTO__VALUE_BOOL_LIST && a->bool_list) {
			for (size_t d = 0; d < a->bool_list->n_values; d++)
				if (!a->bool_list->values[d])
					n->partial = 1;
		} else if (!attr_int(a, &v))
			continue;
		else if (!strcmp(k, "is_cpu_op"))
			n->cpu = v != 0;
		else if (!strcmp(k, "stream")) {
			n->stream = v;
			has_stream = 1;
		} else if (!strcmp(k, "tid") && !has_stream)
			n->stream = v;
		else if (!strcmp(k, "comm_type")) {
			n->has_comm_type = 1;
			n->comm_type = v < 0 || v > 64 ? -1 : (int)v;
		} else if (!strcmp(k, "comm_size"))
			n->comm_size = v;
		else if (!strcmp(k, "comm_src")) {
			n->src = v;
			n->has_src = 1;
		} else if (!strcmp(k, "comm_dst")) {
			n->dst = v;
			n->has_dst = 1;
		} else if (!strcmp(k, "comm_tag"))
			n->tag = v;
		else if (!strcmp(k, "rf_id"))
			n->rf_id = v;
	}
}

static int add_node(struct chk_rank *r, const ChakraProtoMsg__Node *m)
{
	if (r->n == r->cap) {
		long cap = r->cap ? 2 * r->cap : 1024;
		struct chk_node *p = realloc(r->nd, (size_t)cap * sizeof *p);
		if (!p)
			return -1;
		r->nd = p;
		r->cap = cap;
	}
	struct chk_node *n = &r->nd[r->n];
	memset(n, 0, sizeof *n);
	n->id = m->id;
	n->type = (int)m->type;
	n->dur_us = m->duration_micros > (uint64_t)(1LL << 50) ? (1LL << 50) : (long long)m->duration_micros;
	n->start_us = m->start_time_micros > (uint64_t)(1LL << 50) ? 0 : (long long)m->start_time_micros;
	n->name = printable(strdup(m->name ? m->name : ""));
	n->rf_id = -1;
	read_attrs(m, n);
	size_t nd = m->n_ctrl_deps + m->n_data_deps;
	if (nd > 1000000)
		nd = 0; /* not a graph this importer can follow; refused by the caller */
	n->deps = nd ? malloc(nd * sizeof *n->deps) : NULL;
	if (!n->name || (nd && !n->deps)) {
		free(n->name);
		free(n->deps);
		return -1;
	}
	if (m->n_ctrl_deps)
		memcpy(n->deps, m->ctrl_deps, m->n_ctrl_deps * sizeof *n->deps);
	if (m->n_data_deps)
		memcpy(n->deps + m->n_ctrl_deps, m->data_deps, m->n_data_deps * sizeof *n->deps);
	n->nctrl = (int)m->n_ctrl_deps;
	n->ndeps = (int)nd;
	r->n++;
	if (!n->cpu && m->inputs) {
		n->shapes = dup_or_null(m->inputs->shapes);
		n->types = dup_or_null(m->inputs->types);
		n->values = dup_or_null(m->inputs->values);
		if ((m->inputs->shapes && *m->inputs->shapes && !n->shapes) ||
		    (m->inputs->types && *m->inputs->types && !n->types) ||
		    (m->inputs->values && *m->inputs->values && !n->values))
			return -1;
	}
	return 0;
}

int chk_read(const unsigned char *data, size_t len, const char *name, const struct imp_options *o, int index,
             struct chk_rank *r, char *why, size_t whylen)
{
	memset(r, 0, sizeof *r);
	r->path = name;
	r->job_rank = index;
	long long max = o && o->max_events > 0 ? o->max_events : DEFAULT_MAX_NODES;
	size_t at = 0;
	long msg = 0;
	while (at < len) {
		size_t start = at;
		uint64_t n = 0;
		int cut = varint(data, len, &at, &n);
		if (cut || n > len - at)
			return fail(why, whylen, SIM_EXIT_TRACE, "%s: message %ld (byte %zu): %s", name, msg, start,
			            cut ? "the length prefix is cut short (expected a varint)"
			                : "the message is cut short (a truncated file?)");
		if (msg == 0) {
			ChakraProtoMsg__GlobalMetadata *g =
			    chakra_proto_msg__global_metadata__unpack(NULL, (size_t)n, data + at);
			if (!g)
				return fail(why, whylen, SIM_EXIT_TRACE,
				            "%s: message 0: not a Chakra GlobalMetadata (the protobuf does not decode; "
				            "expected a Chakra execution trace, et_def.proto)",
				            name);
			int ok = known_version(g->version);
			char v[64];
			snprintf(v, sizeof v, "%s", g->version ? g->version : "");
			printable(v);
			chakra_proto_msg__global_metadata__free_unpacked(g, NULL);
			if (!ok)
				return fail(
				    why, whylen, SIM_EXIT_TRACE,
				    "%s: GlobalMetadata.version '%s': an unknown Chakra schema version (this sim "
				    "reads 0.0.4, or none)",
				    name, v);
		} else {
			if (msg > max)
				return fail(why, whylen, SIM_EXIT_TRACE, "%s: more than %lld nodes (--max-events)",
				            name, max);
			ChakraProtoMsg__Node *m = chakra_proto_msg__node__unpack(NULL, (size_t)n, data + at);
			if (!m)
				return fail(
				    why, whylen, SIM_EXIT_TRACE,
				    "%s: message %ld (byte %zu): not a Chakra Node (the protobuf does not decode)",
				    name, msg, start);
			int bad = m->n_ctrl_deps + m->n_data_deps > 1000000;
			int rc = bad ? 0 : add_node(r, m);
			uint64_t id = m->id;
			chakra_proto_msg__node__free_unpacked(m, NULL);
			if (bad)
				return fail(why, whylen, SIM_EXIT_TRACE,
				            "%s: node %llu: more than 1000000 dependencies", name,
				            (unsigned long long)id);
			if (rc)
				return fail(why, whylen, SIM_EXIT_INTERNAL, "%s: out of memory", name);
		}
		at += (size_t)n;
		msg++;
	}
	if (msg == 0)
		return fail(why, whylen, SIM_EXIT_TRACE,
		            "%s: empty: not a Chakra execution trace (expected a GlobalMetadata, then nodes)", name);
	return 0;
}

/* ---- the graph ---- */

struct idx {
	uint64_t id;
	long i;
};

static int by_id(const void *a, const void *b)
{
	const struct idx *x = a, *y = b;
	if (x->id != y->id)
		return x->id < y->id ? -1 : 1;
	return x->i < y->i ? -1 : 1;
}

static long find_id(long n, const struct idx *sorted, uint64_t id)
{
	long lo = 0, hi = n - 1;
	while (lo <= hi) {
		long mid = lo + (hi - lo) / 2;
		uint64_t x = sorted[mid].id;
		if (x == id)
			return sorted[mid].i;
		if (x < id)
			lo = mid + 1;
		else
			hi = mid - 1;
	}
	return -1;
}

/* A binary min-heap of node indices (file order breaks ties among ready
   nodes, so a graph written in a valid order keeps it). */
static void heap_push(long *h, long *n, long v)
{
	long i = (*n)++;
	while (i > 0 && h[(i - 1) / 2] > v) {
		h[i] = h[(i - 1) / 2];
		i = (i - 1) / 2;
	}
	h[i] = v;
}

static long heap_pop(long *h, long *n)
{
	long top = h[0], v = h[--(*n)], i = 0;
	for (;;) {
		long c = 2 * i + 1;
		if (c >= *n)
			break;
		if (c + 1 < *n && h[c + 1] < h[c])
			c++;
		if (h[c] >= v)
			break;
		h[i] = h[c];
		i = c;
	}
	if (*n)
		h[i] = v;
	return top;
}

int chk_graph(struct chk_rank *r, char *why, size_t whylen)
{
	long n = r->n, total = 0;
	for (long i = 0; i < n; i++)
		total += r->nd[i].ndeps;
	struct idx *sorted = malloc((size_t)(n + 1) * sizeof *sorted);
	r->dstart = malloc((size_t)(n + 1) * sizeof *r->dstart);
	r->dep = malloc((size_t)(total + 1) * sizeof *r->dep);
	r->order = malloc((size_t)(n + 1) * sizeof *r->order);
	r->pos = malloc((size_t)(n + 1) * sizeof *r->pos);
	long *indeg = calloc((size_t)n + 1, sizeof *indeg), *succ_start = calloc((size_t)n + 2, sizeof *succ_start);
	long *succ = malloc((size_t)(total + 1) * sizeof *succ), *heap = malloc((size_t)(n + 1) * sizeof *heap);
	long *seen = malloc((size_t)(n + 1) * sizeof *seen); /* seen[d] == i: node i lists d already */
	int rc = 0;
	if (!sorted || !seen || !r->dstart || !r->dep || !r->order || !r->pos || !indeg || !succ_start || !succ ||
	    !heap) {
		rc = fail(why, whylen, SIM_EXIT_INTERNAL, "%s: out of memory", r->path);
		goto out;
	}
	for (long i = 0; i < n; i++) {
		sorted[i] = (struct idx){r->nd[i].id, i};
		seen[i] = -1;
	}
	qsort(sorted, (size_t)n, sizeof *sorted, by_id);
	for (long i = 1; i < n; i++)
		if (sorted[i].id == sorted[i - 1].id) {
			rc = fail(why, whylen, SIM_EXIT_TRACE,
			          "%s: node id %llu twice ('%s' and '%s'; expected each node once)", r->path,
			          (unsigned long long)sorted[i].id, r->nd[sorted[i - 1].i].name,
			          r->nd[sorted[i].i].name);
			goto out;
		}
	/* resolve, dropping absent nodes (invariant 2) and repeats */
	long k = 0;
	for (long i = 0; i < n; i++) {
		r->dstart[i] = k;
		struct chk_node *nd = &r->nd[i];
		nd->ctrl = -1;
		for (int j = 0; j < nd->nctrl && nd->ctrl < 0; j++) {
			long d = find_id(n, sorted, nd->deps[j]);
			if (d >= 0 && d != i)
				nd->ctrl = d;
		}
		for (int j = nd->nctrl; j < nd->ndeps; j++) {
			long d = find_id(n, sorted, nd->deps[j]);
			if (d < 0) {
				r->missing_deps++;
				continue;
			}
			if (d == i) { /* recorded so by Chakra's converter at times: it means nothing */
				r->self_deps++;
				continue;
			}
			if (seen[d] != i) {
				seen[d] = i;
				r->dep[k++] = d;
			}
		}
	}
	r->dstart[n] = k;
	/* successors (CSR) and in-degrees */
	for (long i = 0; i < n; i++)
		for (long q = r->dstart[i]; q < r->dstart[i + 1]; q++) {
			succ_start[r->dep[q] + 1]++;
			indeg[i]++;
		}
	for (long i = 0; i < n; i++)
		succ_start[i + 1] += succ_start[i];
	long *fill = calloc((size_t)n + 1, sizeof *fill);
	if (!fill) {
		rc = fail(why, whylen, SIM_EXIT_INTERNAL, "%s: out of memory", r->path);
		goto out;
	}
	for (long i = 0; i < n; i++)
		for (long q = r->dstart[i]; q < r->dstart[i + 1]; q++) {
			long d = r->dep[q];
			succ[succ_start[d] + fill[d]++] = i;
		}
	free(fill);
	long nh = 0, done = 0;
	for (long i = 0; i < n; i++)
		if (!indeg[i])
			heap_push(heap, &nh, i);
	while (nh) {
		long v = heap_pop(heap, &nh);
		r->pos[v] = done;
		r->order[done++] = v;
		for (long q = succ_start[v]; q < succ_start[v + 1]; q++)
			if (!--indeg[succ[q]])
				heap_push(heap, &nh, succ[q]);
	}
	if (done < n) {
		long v = 0;
		while (v < n && !indeg[v])
			v++;
		rc = fail(why, whylen, SIM_EXIT_TRACE,
		          "%s: node %llu '%s': its dependencies form a cycle (expected an acyclic graph; %ld nodes "
		          "on or after cycles)",
		          r->path, (unsigned long long)r->nd[v].id, r->nd[v].name, n - done);
	}
out:
	free(sorted);
	free(seen);
	free(indeg);
	free(succ_start);
	free(succ);
	free(heap);
	return rc;
}

void chk_rank_free(struct chk_rank *r)
{
	for (long i = 0; i < r->n; i++) {
		struct chk_node *n = &r->nd[i];
		free(n->name);
		free(n->shapes);
		free(n->types);
		free(n->values);
		free(n->deps);
		free(n->text);
		free(n->pg);
	}
	free(r->nd);
	free(r->order);
	free(r->pos);
	free(r->dep);
	free(r->dstart);
	memset(r, 0, sizeof *r);
}

/* ---- communicator groups ---- */

static int int_cmp(const void *a, const void *b)
{
	int x = *(const int *)a, y = *(const int *)b;
	return (x > y) - (x < y);
}

static int str_cmp(const void *a, const void *b)
{
	return strcmp(*(const char *const *)a, *(const char *const *)b);
}

int chk_groups_load(const char *path, struct chk_groups *G, char *why, size_t whylen)
{
	memset(G, 0, sizeof *G);
	json_error_t e;
	json_t *j = json_load_file(path, JSON_REJECT_DUPLICATES, &e);
	if (!j) {
		FILE *f = fopen(path, "r");
		if (!f)
			return fail(why, whylen, SIM_EXIT_NOINPUT, "%s: cannot read", path);
		fclose(f);
		return fail(why, whylen, SIM_EXIT_TRACE, "%s: not JSON: line %d, column %d: %s", path, e.line, e.column,
		            e.text);
	}
	int rc = 0;
	size_t n = json_is_object(j) ? json_object_size(j) : 0;
	if (!json_is_object(j) || n > 1000000)
		rc = fail(why, whylen, SIM_EXIT_TRACE,
		          "%s: expected an object of communicator groups, {\"PG_NAME\": [rank, ...], ...}", path);
	const char **keys = rc ? NULL : calloc(n + 1, sizeof *keys);
	G->name = rc ? NULL : calloc(n + 1, sizeof *G->name);
	G->ranks = rc ? NULL : calloc(n + 1, sizeof *G->ranks);
	G->n = rc ? NULL : calloc(n + 1, sizeof *G->n);
	if (!rc && (!keys || !G->name || !G->ranks || !G->n))
		rc = fail(why, whylen, SIM_EXIT_INTERNAL, "%s: out of memory", path);
	const char *key;
	json_t *v;
	size_t k = 0;
	if (!rc)
		json_object_foreach(j, key, v) keys[k++] = key;
	if (!rc)
		qsort(keys, n, sizeof *keys, str_cmp);
	for (size_t g = 0; g < n && !rc; g++) {
		v = json_object_get(j, keys[g]);
		size_t m = json_is_array(v) ? json_array_size(v) : 0;
		if (!m || m > (1u << 20)) {
			rc = fail(why, whylen, SIM_EXIT_TRACE,
			          "%s: group '%.64s': expected a list of 1 to 1048576 ranks", path, keys[g]);
			break;
		}
		G->name[g] = printable(strdup(keys[g]));
		G->ranks[g] = malloc(m * sizeof **G->ranks);
		G->count = (int)g + 1;
		if (!G->name[g] || !G->ranks[g]) {
			rc = fail(why, whylen, SIM_EXIT_INTERNAL, "%s: out of memory", path);
			break;
		}
		for (size_t q = 0; q < m && !rc; q++) {
			json_t *x = json_array_get(v, q);
			if (!json_is_integer(x) || json_integer_value(x) < 0 || json_integer_value(x) >= (1 << 20))
				rc = fail(
				    why, whylen, SIM_EXIT_TRACE,
				    "%s: group '%.64s': member %zu is not a rank (expected an integer 0 to 1048575)",
				    path, keys[g], q);
			else
				G->ranks[g][q] = (int)json_integer_value(x);
		}
		G->n[g] = (int)m;
		qsort(G->ranks[g], m, sizeof **G->ranks, int_cmp);
		for (size_t q = 1; q < m && !rc; q++)
			if (G->ranks[g][q] == G->ranks[g][q - 1])
				rc = fail(why, whylen, SIM_EXIT_TRACE, "%s: group '%.64s': rank %d twice", path,
				          keys[g], G->ranks[g][q]);
	}
	free(keys);
	json_decref(j);
	if (rc)
		chk_groups_free(G);
	return rc;
}

void chk_groups_free(struct chk_groups *G)
{
	for (int g = 0; g < G->count; g++) {
		free(G->name[g]);
		free(G->ranks[g]);
	}
	free(G->name);
	free(G->ranks);
	free(G->n);
	memset(G, 0, sizeof *G);
}
