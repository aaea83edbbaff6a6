/*
 * kineto.c -- reads one rank of a PyTorch profiler (Kineto) trace: the GPU
 * activity (kernels, copies, memsets), the runtime calls that launched it
 * (matched by correlation id), the CPU ops that enclose each launch on its
 * thread (innermost first), and the host's synchronizations; then decides
 * for each GPU item whether the model times it (kineto_ops.c) or it keeps
 * its measured duration (import_int.h states the invariants).
 *
 * Work and memory are bounded by the file's size (--max-bytes) and its
 * event count (--max-events); every pass is a sort or a linear sweep.
 */
#include "arch.h"
#include "import_int.h"

#include <math.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

struct gpu_ev {
	json_t *args;     /* its args (a reference of its own) */
	char *cat, *name; /* owned */
	double ts, dur;   /* us */
	long long corr;
	int stream;
	long index; /* in traceEvents */
	int launch; /* index in rt[], -1 none */
};

struct rt_ev {
	char *name; /* owned */
	double ts, dur;
	long long corr, tid;
	int cpu;  /* enclosing CPU op, -1 none */
	int used; /* a GPU item's launch, a sync or a wait */
};

struct cpu_ev {
	char *name;   /* owned */
	json_t *args; /* a reference of its own */
	double ts, end;
	long long tid;
};

struct rd {
	const char *name;
	char *why;
	size_t whylen;
	struct gpu_ev *g;
	long ng;
	struct rt_ev *rt;
	long nrt;
	struct cpu_ev *c;
	long nc;
	long capg, capr, capc; /* allocated */
};

static int fail(struct rd *R, int code, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
static int fail(struct rd *R, int code, const char *fmt, ...)
{
	int k = snprintf(R->why, R->whylen, "%s: ", R->name);
	if (k < 0 || (size_t)k >= R->whylen)
		return code;
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(R->why + k, R->whylen - (size_t)k, fmt, ap);
	va_end(ap);
	imp_one_line(R->why);
	return code;
}

static long long tid_of(json_t *v)
{
	if (json_is_integer(v))
		return json_integer_value(v);
	if (json_is_real(v))
		return (long long)json_real_value(v);
	if (json_is_string(v)) { /* FNV-1a: a thread named by a string */
		uint64_t h = 1469598103934665603ull;
		for (const char *s = json_string_value(v); *s; s++)
			h = (h ^ (unsigned char)*s) * 1099511628211ull;
		return (long long)(h >> 1);
	}
	return 0;
}

/* Category names of Kineto's current and older exports. */
static int is_cat(const char *cat, const char *a, const char *b)
{
	return !strcmp(cat, a) || (b && !strcmp(cat, b));
}

static void short_name(char *dst, const char *src)
{
	size_t j = 0;
	for (; *src && j + 1 < KIN_NAME; src++)
		dst[j++] = (*src >= 32 && *src < 127) ? *src : '?';
	dst[j] = 0;
}

/* Room for one more element in *v (n used of *cap, each size bytes); -1 out of memory. */
static int grow(void **v, long *cap, long n, size_t size)
{
	if (n < *cap)
		return 0;
	long c = *cap ? 2 * *cap : 1024;
	void *p = realloc(*v, (size_t)c * size);
	if (!p)
		return -1;
	*v = p;
	*cap = c;
	return 0;
}

/* One GPU event: ts, dur, args.stream and args.correlation, or an error. */
static int take_gpu(struct rd *R, json_t *e, long i, const char *cat, const char *name)
{
	json_t *args = json_object_get(e, "args");
	json_t *ts = json_object_get(e, "ts"), *dur = json_object_get(e, "dur");
	if (!json_is_number(ts) || !json_is_number(dur) || !(json_number_value(dur) >= 0) ||
	    !isfinite(json_number_value(ts)) || !(json_number_value(dur) < 1e12))
		return fail(R, SIM_EXIT_TRACE,
		            "traceEvents[%ld]: %s '%.60s' needs numbers ts and dur (dur >= 0, in us)", i, cat, name);
	json_t *corr = args ? json_object_get(args, "correlation") : NULL;
	if (!json_is_integer(corr))
		return fail(R, SIM_EXIT_TRACE,
		            "traceEvents[%ld]: %s '%.60s' has no args.correlation (expected the id of the runtime call "
		            "that launched it)",
		            i, cat, name);
	json_t *st = json_object_get(args, "stream");
	if (!json_is_integer(st) || json_integer_value(st) < 0 || json_integer_value(st) > 1000000000)
		return fail(R, SIM_EXIT_TRACE,
		            "traceEvents[%ld]: %s '%.60s' has no args.stream (expected the stream id)", i, cat, name);
	if (grow((void **)&R->g, &R->capg, R->ng, sizeof *R->g))
		return fail(R, SIM_EXIT_INTERNAL, "out of memory");
	struct gpu_ev *g = &R->g[R->ng];
	memset(g, 0, sizeof *g);
	g->cat = strdup(cat);
	g->name = strdup(name);
	g->args = json_incref(args);
	R->ng++;
	if (!g->cat || !g->name)
		return fail(R, SIM_EXIT_INTERNAL, "out of memory");
	g->ts = json_number_value(ts);
	g->dur = json_number_value(dur);
	g->corr = json_integer_value(corr);
	g->stream = (int)json_integer_value(st);
	g->index = i;
	g->launch = -1;
	return 0;
}

/* One element of traceEvents: what the importer uses of it is copied out (GPU items, runtime calls, CPU ops;
   every other event is dropped), so the element's own tree can go. */
static int take_event(struct rd *R, json_t *e, long i)
{
	if (!json_is_object(e))
		return fail(R, SIM_EXIT_TRACE, "traceEvents[%ld]: expected an object", i);
	const char *ph = json_string_value(json_object_get(e, "ph"));
	const char *cat = json_string_value(json_object_get(e, "cat"));
	const char *name = json_string_value(json_object_get(e, "name"));
	if (!ph || strcmp(ph, "X") || !cat)
		return 0;
	if (!name)
		name = "";
	if (is_cat(cat, "kernel", "Kernel") || is_cat(cat, "gpu_memcpy", "Memcpy") ||
	    is_cat(cat, "gpu_memset", "Memset"))
		return take_gpu(R, e, i, cat, name);
	json_t *ts = json_object_get(e, "ts"), *dur = json_object_get(e, "dur");
	if (!json_is_number(ts) || !json_is_number(dur) || !isfinite(json_number_value(ts)) ||
	    !(json_number_value(dur) >= 0) || !(json_number_value(dur) < 1e12))
		return 0; /* host events without times say nothing we use */
	if (is_cat(cat, "cuda_runtime", "Runtime") || is_cat(cat, "cuda_driver", NULL)) {
		json_t *corr = json_object_get(json_object_get(e, "args"), "correlation");
		if (!json_is_integer(corr))
			return 0;
		if (grow((void **)&R->rt, &R->capr, R->nrt, sizeof *R->rt))
			return fail(R, SIM_EXIT_INTERNAL, "out of memory");
		struct rt_ev *r = &R->rt[R->nrt++];
		memset(r, 0, sizeof *r);
		r->name = strdup(name);
		r->ts = json_number_value(ts);
		r->dur = json_number_value(dur);
		r->corr = json_integer_value(corr);
		r->tid = tid_of(json_object_get(e, "tid"));
		r->cpu = -1;
		if (!r->name)
			return fail(R, SIM_EXIT_INTERNAL, "out of memory");
	} else if (is_cat(cat, "cpu_op", "Operator")) {
		if (grow((void **)&R->c, &R->capc, R->nc, sizeof *R->c))
			return fail(R, SIM_EXIT_INTERNAL, "out of memory");
		struct cpu_ev *c = &R->c[R->nc++];
		memset(c, 0, sizeof *c);
		c->name = strdup(name);
		c->args = json_incref(json_object_get(e, "args"));
		c->ts = json_number_value(ts);
		c->end = c->ts + json_number_value(dur);
		c->tid = tid_of(json_object_get(e, "tid"));
		if (!c->name)
			return fail(R, SIM_EXIT_INTERNAL, "out of memory");
	}
	return 0;
}

static int rt_by_corr(const void *a, const void *b)
{
	const struct rt_ev *x = a, *y = b;
	if (x->corr != y->corr)
		return x->corr < y->corr ? -1 : 1;
	return (x->ts > y->ts) - (x->ts < y->ts);
}

static long find_corr(const struct rd *R, long long corr)
{
	long lo = 0, hi = R->nrt;
	while (lo < hi) {
		long mid = lo + (hi - lo) / 2;
		if (R->rt[mid].corr < corr)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo < R->nrt && R->rt[lo].corr == corr ? lo : -1;
}

/* The sweep of enclosing CPU ops: per thread, in time order, CPU ops before
   launches at one instant and longer ops first (the outer before the inner). */
struct mark {
	long long tid;
	double ts, end;
	int kind; /* 0 CPU op, 1 runtime call */
	long idx;
};

static int mark_cmp(const void *a, const void *b)
{
	const struct mark *x = a, *y = b;
	if (x->tid != y->tid)
		return x->tid < y->tid ? -1 : 1;
	if (x->ts != y->ts)
		return x->ts < y->ts ? -1 : 1;
	if (x->kind != y->kind)
		return x->kind - y->kind;
	if (x->end != y->end)
		return x->end > y->end ? -1 : 1;
	return (x->idx > y->idx) - (x->idx < y->idx);
}

static int enclose(struct rd *R)
{
	long n = R->nc + R->nrt;
	struct mark *m = malloc((size_t)(n + 1) * sizeof *m);
	long *stack = malloc((size_t)(R->nc + 1) * sizeof *stack);
	if (!m || !stack) {
		free(m);
		free(stack);
		return fail(R, SIM_EXIT_INTERNAL, "out of memory");
	}
	long k = 0;
	for (long i = 0; i < R->nc; i++)
		m[k++] = (struct mark){R->c[i].tid, R->c[i].ts, R->c[i].end, 0, i};
	for (long i = 0; i < R->nrt; i++)
		m[k++] = (struct mark){R->rt[i].tid, R->rt[i].ts, R->rt[i].ts + R->rt[i].dur, 1, i};
	qsort(m, (size_t)k, sizeof *m, mark_cmp);
	long sp = 0;
	for (long i = 0; i < k; i++) {
		if (i && m[i].tid != m[i - 1].tid)
			sp = 0;
		while (sp && R->c[stack[sp - 1]].end < m[i].ts)
			sp--;
		if (m[i].kind == 0)
			stack[sp++] = m[i].idx;
		else
			R->rt[m[i].idx].cpu = sp ? (int)stack[sp - 1] : -1;
	}
	free(m);
	free(stack);
	return 0;
}

static int host_kind(const char *name)
{
	if (strstr(name, "Synchronize"))
		return HK_SYNC;
	if (strstr(name, "StreamWaitEvent"))
		return HK_WAIT;
	return -1;
}

/* A synchronous copy: the host returns when it is done. */
static int sync_copy(const char *name)
{
	return !strcmp(name, "cudaMemcpy") || !strcmp(name, "hipMemcpy") || !strcmp(name, "hipMemcpyWithStream") ||
	       !strcmp(name, "cudaMemcpy2D") || !strcmp(name, "cuMemcpyDtoH_v2") || !strcmp(name, "cuMemcpyHtoD_v2");
}

struct hev {
	double ts;
	long long corr;
	long rt; /* index in rt[] */
};

static int hev_cmp(const void *a, const void *b)
{
	const struct hev *x = a, *y = b;
	if (x->ts != y->ts)
		return x->ts < y->ts ? -1 : 1;
	return (x->corr > y->corr) - (x->corr < y->corr);
}

static int dbl_cmp(const void *a, const void *b)
{
	const double *x = a, *y = b;
	return (*x > *y) - (*x < *y);
}

static int gpu_by_corr(const void *a, const void *b)
{
	const struct gpu_ev *x = a, *y = b;
	if (x->corr != y->corr)
		return x->corr < y->corr ? -1 : 1;
	if (x->ts != y->ts)
		return x->ts < y->ts ? -1 : 1;
	return (x->index > y->index) - (x->index < y->index);
}

static struct kin_item *push(struct kin_rank *r)
{
	if (r->n == r->cap) {
		long cap = r->cap ? 2 * r->cap : 256;
		struct kin_item *p = realloc(r->it, (size_t)cap * sizeof *p);
		if (!p)
			return NULL;
		r->it = p;
		r->cap = cap;
	}
	struct kin_item *it = &r->it[r->n++];
	memset(it, 0, sizeof *it);
	it->cpu = -1;
	return it;
}

static long long ns(double us)
{
	return llround(us * 1000.0);
}

/* The model's decision for one GPU item (invariant 3). cstate per CPU op:
   0 not looked at, 1 its op is emitted (later items covered), 2 it cannot
   be modelled as a whole, 3 carried by --carry. */
static void decide(struct rd *R, const struct imp_options *o, struct kin_item *it, const struct gpu_ev *g,
                   signed char *cstate, const char *const *ckernel)
{
	int c = it->cpu;
	json_t *cargs = c >= 0 ? R->c[c].args : NULL;
	if ((o && o->all_measured) || imp_carry_named(o, g->name) || (c >= 0 && cstate[c] == 3)) {
		it->how = KH_CARRIED;
		return;
	}
	if (it->fam == IF_NCCL) {
		it->how = kin_coll(g->args, cargs, it) ? KH_COLL : KH_CARRIED;
		return;
	}
	if (c >= 0 && cstate[c] == 1) {
		it->how = KH_COVERED;
		return;
	}
	/* a CPU op that launched only copies and memsets (a .to(device), a zero_) is its items: each a copy */
	if (c >= 0 && cstate[c] == 0) {
		cstate[c] = 2;
		if (ckernel[c] && kin_cpu_op(R->c[c].name, cargs, ckernel[c], it->text, sizeof it->text)) {
			cstate[c] = 1;
			it->how = KH_MODELLED;
			return;
		}
	}
	if (it->fam == IF_MEMCPY && kin_copy_op(g->name, g->args, c >= 0 ? R->c[c].name : NULL, cargs,
	                                        is_cat(g->cat, "gpu_memset", "Memset"), it->text, sizeof it->text)) {
		it->how = KH_MODELLED;
		return;
	}
	it->how = KH_CARRIED;
}

/* The rank's GPU busy time as disjoint intervals (us), in time order: the
   union of its items. n is set; NULL when memory runs out. */
struct busy_iv {
	double t0, t1;
};

static int iv_by_start(const void *a, const void *b)
{
	const struct busy_iv *x = a, *y = b;
	return (x->t0 > y->t0) - (x->t0 < y->t0);
}

static struct busy_iv *gpu_busy(const struct rd *R, long *n)
{
	struct busy_iv *v = malloc((size_t)(R->ng + 1) * sizeof *v);
	*n = 0;
	if (!v)
		return NULL;
	for (long i = 0; i < R->ng; i++)
		v[i] = (struct busy_iv){R->g[i].ts, R->g[i].ts + R->g[i].dur};
	if (R->ng > 0)
		qsort(v, (size_t)R->ng, sizeof *v, iv_by_start);
	for (long i = 0; i < R->ng; i++) {
		if (*n > 0 && v[i].t0 <= v[*n - 1].t1) {
			if (v[i].t1 > v[*n - 1].t1)
				v[*n - 1].t1 = v[i].t1;
		} else {
			v[(*n)++] = v[i];
		}
	}
	return v;
}

/* How long the GPU was busy during [a, b] (us); calls come in time order, so
 *from only moves forward past intervals that end before a. */
static double busy_during(const struct busy_iv *v, long n, long *from, double a, double b)
{
	while (*from < n && v[*from].t1 <= a)
		(*from)++;
	double busy = 0;
	for (long k = *from; k < n && v[k].t0 < b; k++)
		busy += fmin(b, v[k].t1) - fmax(a, v[k].t0);
	return busy;
}

/* The SM (CU) count a trace that names no device implies: CUPTI records each kernel's grid and its blocks per SM
   (the grid's blocks over the device's SMs), so their ratio is the SM count; the most frequent of the kernels'
   (0 when no kernel records both). */
static int units_from_grids(const struct rd *R)
{
	enum { NV = 16 };
	int val[NV], cnt[NV], nv = 0, best = 0;
	for (long i = 0; i < R->ng; i++) {
		json_t *gr = json_object_get(R->g[i].args, "grid"), *b = json_object_get(R->g[i].args, "blocks per SM");
		if (!json_is_array(gr) || json_array_size(gr) != 3 || !json_is_number(b) || !(json_number_value(b) > 0))
			continue;
		double blocks = 1;
		for (size_t k = 0; k < 3; k++) {
			json_t *v = json_array_get(gr, k);
			blocks *= json_is_integer(v) && json_integer_value(v) > 0 ? (double)json_integer_value(v) : NAN;
		}
		double u = blocks / json_number_value(b);
		if (!(u >= 1 && u < 1e5) || fabs(u - round(u)) > 0.01)
			continue;
		int k = 0;
		while (k < nv && val[k] != (int)round(u))
			k++;
		if (k == nv && nv < NV)
			val[nv] = (int)round(u), cnt[nv++] = 0;
		if (k < nv && ++cnt[k] > (best ? cnt[best - 1] : 0))
			best = k + 1;
	}
	return best ? val[best - 1] : 0;
}

static int build(struct rd *R, const struct imp_options *o, struct kin_rank *r)
{
	if (!r->device[0])
		r->device_units = units_from_grids(R);
	if (R->nrt > 0) /* (qsort's array may not be NULL, even empty) */
		qsort(R->rt, (size_t)R->nrt, sizeof *R->rt, rt_by_corr);
	if (R->ng > 0)
		qsort(R->g, (size_t)R->ng, sizeof *R->g, gpu_by_corr);
	for (long i = 0; i < R->ng; i++) {
		long l = find_corr(R, R->g[i].corr);
		R->g[i].launch = (int)l;
		if (l < 0) { /* launched before the window (invariant 2) */
			r->st.outside++;
			r->st.outside_us += R->g[i].dur;
		} else
			R->rt[l].used = 1;
	}
	for (long i = 0; i < R->nrt; i++)
		if (host_kind(R->rt[i].name) >= 0)
			R->rt[i].used = 1;
	int rc = enclose(R);
	if (rc)
		return rc;
	struct hev *h = malloc((size_t)(R->nrt + 1) * sizeof *h);
	signed char *cstate = calloc((size_t)R->nc + 1, 1);
	const char **ckernel = calloc((size_t)R->nc + 1, sizeof *ckernel);
	if (!h || !cstate || !ckernel) {
		free(h);
		free(cstate);
		free(ckernel);
		return fail(R, SIM_EXIT_INTERNAL, "out of memory");
	}
	long nh = 0;
	for (long i = 0; i < R->nrt; i++)
		if (R->rt[i].used)
			h[nh++] = (struct hev){R->rt[i].ts, R->rt[i].corr, i};
	qsort(h, (size_t)nh, sizeof *h, hev_cmp);
	/* --carry applies to the whole CPU op of a kernel it names; a CPU op's
	   kernel (what picks an attention's implementation) is its first
	   attention or GEMM kernel, else its first that is not a copy or memset */
	signed char *ckmain = calloc((size_t)R->nc + 1, 1);
	if (!ckmain) {
		free(h);
		free(cstate);
		free(ckernel);
		return fail(R, SIM_EXIT_INTERNAL, "out of memory");
	}
	for (long i = 0; i < R->ng; i++) {
		int c = R->g[i].launch >= 0 ? R->rt[R->g[i].launch].cpu : -1;
		if (c < 0)
			continue;
		if (imp_carry_named(o, R->g[i].name))
			cstate[c] = 3;
		/* g[] is in correlation order: launch order */
		enum imp_family f = kin_family(R->g[i].cat, R->g[i].name);
		int main_kernel = f == IF_ATTN || f == IF_GEMM;
		if (f != IF_MEMCPY && (!ckernel[c] || (main_kernel && !ckmain[c]))) {
			ckernel[c] = R->g[i].name;
			ckmain[c] = (signed char)main_kernel;
		}
	}
	free(ckmain);
	double t0 = nh ? h[0].ts : 0;
	/* the host's own time: a runtime call counts up to KIN_CALL_CAP_NS; past
	   that, what of it the GPU was busy for the host may have been waiting
	   for the GPU (a full launch queue, a blocking allocation), while what
	   the GPU was idle for was the host's own work (a module loaded at a
	   kernel's first launch); a synchronizing call waits all along. The
	   waits are taken out of the host's timeline (the replay makes them) */
	long nbusy = 0, from = 0;
	struct busy_iv *busy = gpu_busy(R, &nbusy);
	if (!busy)
		rc = fail(R, SIM_EXIT_INTERNAL, "out of memory");
	/* --profiler-overhead: the CPU ops' starts in time order, to count those
	   in each gap between two runtime calls */
	double *cts = o->profiler_ns > 0 ? malloc((size_t)(R->nc + 1) * sizeof *cts) : NULL;
	if (o->profiler_ns > 0 && !cts)
		rc = fail(R, SIM_EXIT_INTERNAL, "out of memory");
	for (long c = 0; cts && c < R->nc; c++)
		cts[c] = R->c[c].ts;
	if (cts && R->nc > 0)
		qsort(cts, (size_t)R->nc, sizeof *cts, dbl_cmp);
	long cnext = 0;
	long long shift = 0, prev_end = 0;
	for (long i = 0; i < nh && !rc; i++) {
		const struct rt_ev *l = &R->rt[h[i].rt];
		long gi;
		long long call = ns(l->dur), own = call < KIN_CALL_CAP_NS ? call : KIN_CALL_CAP_NS;
		if (call > KIN_CALL_CAP_NS) {
			long long idle = call - ns(busy_during(busy, nbusy, &from, l->ts, l->ts + l->dur));
			if (idle > own)
				own = idle;
		}
		if (host_kind(l->name) == HK_SYNC || sync_copy(l->name))
			own = 0;
		long long at = ns(l->ts - t0) - shift;
		if (cts) { /* the profiler's cost of the CPU ops begun since the last call, down to that call's end */
			long k = 0;
			while (cnext < R->nc && cts[cnext] <= l->ts) {
				k += i > 0 && cts[cnext] > h[i - 1].ts;
				cnext++;
			}
			long long cut = k * o->profiler_ns, room = at - prev_end;
			if (cut > room)
				cut = room > 0 ? room : 0;
			at -= cut;
			shift += cut;
		}
		prev_end = at + own;
		/* the GPU items of this call (gpu[] is sorted by correlation) */
		long lo = 0, hi = R->ng;
		while (lo < hi) {
			long mid = lo + (hi - lo) / 2;
			if (R->g[mid].corr < l->corr)
				lo = mid + 1;
			else
				hi = mid;
		}
		int any = 0;
		for (gi = lo; gi < R->ng && R->g[gi].corr == l->corr; gi++) {
			const struct gpu_ev *g = &R->g[gi];
			struct kin_item *it = push(r);
			if (!it) {
				rc = fail(R, SIM_EXIT_INTERNAL, "out of memory");
				break;
			}
			any = 1;
			it->hk = HK_LAUNCH;
			it->host_ns = at;
			it->host_end_ns = at + own;
			it->sync_after = sync_copy(l->name);
			it->stream = g->stream;
			it->dur_ns = ns(g->dur);
			it->start_ns = ns(g->ts - t0);
			it->cpu = l->cpu;
			it->fam = kin_family(g->cat, g->name);
			short_name(it->name, g->name);
			decide(R, o, it, g, cstate, ckernel);
		}
		shift += call - own;
		int hk = host_kind(l->name);
		if (!any && hk >= 0) {
			struct kin_item *it = push(r);
			if (!it) {
				rc = fail(R, SIM_EXIT_INTERNAL, "out of memory");
				break;
			}
			it->hk = (enum kin_hkind)hk;
			it->host_ns = at;
			it->host_end_ns = at + own;
			short_name(it->name, l->name);
		}
	}
	/* the measured time an op stands for: its kernel's and the covered ones' */
	long *first = malloc((size_t)(R->nc + 1) * sizeof *first);
	if (!first && !rc)
		rc = fail(R, SIM_EXIT_INTERNAL, "out of memory");
	for (long c = 0; first && c < R->nc; c++)
		first[c] = -1;
	for (long i = 0; first && !rc && i < r->n; i++) {
		struct kin_item *it = &r->it[i];
		it->op_ns = it->dur_ns;
		if (it->how == KH_MODELLED) /* counted in the family of the op (a conv is an implicit GEMM) */
			it->fam = !strncmp(it->text, "gemm", 4) || !strncmp(it->text, "conv", 4) ? IF_GEMM
			          : !strncmp(it->text, "attn", 4)                                ? IF_ATTN
			          : !strncmp(it->text, "copy", 4)                                ? IF_MEMCPY
			                                                                         : IF_ELEM;
		if (it->how == KH_MODELLED && it->cpu >= 0 && first[it->cpu] < 0)
			first[it->cpu] = i;
		else if (it->how == KH_COVERED && it->cpu >= 0 && first[it->cpu] >= 0) {
			r->it[first[it->cpu]].op_ns += it->dur_ns;
			it->fam = r->it[first[it->cpu]].fam;
		}
	}
	free(first);
	free(cts);
	free(busy);
	free(h);
	free(cstate);
	free(ckernel);
	return rc;
}

/* distributedInfo.rank and deviceProperties[0], from their values' text */
static int take_meta(struct rd *R, struct js *J, const char *key, struct kin_rank *r)
{
	json_error_t err;
	json_t *v = json_loadb(J->cap, J->caplen, JSON_ALLOW_NUL | JSON_DECODE_ANY, &err);
	if (!v)
		return fail(R, SIM_EXIT_TRACE, "not JSON: line %d, column %d: %s", J->cap_line + err.line - 1,
		            err.line == 1 ? J->cap_col + err.column - 1 : err.column, err.text);
	int rc = 0;
	if (!strcmp(key, "distributedInfo")) {
		json_t *rk = json_object_get(v, "rank");
		if (json_is_integer(rk)) {
			if (json_integer_value(rk) < 0 || json_integer_value(rk) >= (1 << 20))
				rc = fail(R, SIM_EXIT_TRACE, "distributedInfo.rank %lld is out of range (0 to 1048575)",
				          json_integer_value(rk));
			else
				r->job_rank = (int)json_integer_value(rk), r->has_rank = 1;
		}
	} else { /* the recording GPU, for the report (it does not change what is imported) */
		json_t *dev = json_array_get(v, 0);
		if (json_is_string(json_object_get(dev, "name"))) {
			snprintf(r->device, sizeof r->device, "%s", json_string_value(json_object_get(dev, "name")));
			json_t *u = json_object_get(dev, "numSms"), *m = json_object_get(dev, "totalGlobalMem");
			r->device_units =
			    json_is_integer(u) && json_integer_value(u) > 0 && json_integer_value(u) < (1 << 20)
			        ? (int)json_integer_value(u)
			        : 0;
			r->device_mem_B = json_is_number(m) && json_number_value(m) > 0 ? json_number_value(m) : 0;
		}
	}
	json_decref(v);
	return rc;
}

/* traceEvents, one element at a time: each parsed alone, what is used taken, the rest dropped */
static int take_events(struct rd *R, struct js *J, long long maxev, const struct imp_options *o)
{
	if (js_peek(J) != '[') {
		if (J->code || js_capture(J))
			return J->code;
		return fail(R, SIM_EXIT_TRACE,
		            "no traceEvents array: not a PyTorch profiler (Kineto) trace (expected an object with "
		            "\"traceEvents\": [...])");
	}
	js_expect(J, '[', "'['");
	if (js_peek(J) == ']')
		return js_expect(J, ']', "']'");
	for (long i = 0;; i++) {
		if (i >= maxev)
			return fail(R, SIM_EXIT_TRACE, "more than %lld traceEvents (--max-events)", maxev);
		if (js_capture(J))
			return J->code;
		json_error_t err;
		json_t *e = json_loadb(J->cap, J->caplen, JSON_ALLOW_NUL | JSON_DECODE_ANY, &err);
		if (!e)
			return fail(R, SIM_EXIT_TRACE, "not JSON: line %d, column %d: %s", J->cap_line + err.line - 1,
			            err.line == 1 ? J->cap_col + err.column - 1 : err.column, err.text);
		int rc = take_event(R, e, i);
		json_decref(e);
		if (rc)
			return rc;
		if (o && o->progress && progress_due(o->progress))
			progress_print(o->progress, "%s: %.0f MB read, %ld k events", R->name, (double)J->total / 1e6,
			               (i + 1) / 1000);
		int c = js_peek(J);
		if (c == ']')
			return js_expect(J, ']', "']'");
		if (js_expect(J, ',', "',' or ']' after an element of traceEvents"))
			return J->code;
	}
}

int kin_read_js(struct js *J, const char *name, const struct imp_options *o, int index, struct kin_rank *r, char *why,
                size_t whylen)
{
	struct rd R = {.name = name, .why = why, .whylen = whylen};
	memset(r, 0, sizeof *r);
	r->path = name;
	r->job_rank = index;
	long long maxev = o && o->max_events > 0 ? o->max_events : 20000000;
	int rc = 0, events = 0;
	if (J->code)
		return J->code;
	int c = js_peek(J);
	if (c != '{') { /* JSON but not an object, or not JSON */
		if (!J->code && !js_capture(J) && !js_end(J)) {
			json_error_t err;
			json_t *v = json_loadb(J->cap, J->caplen, JSON_ALLOW_NUL | JSON_DECODE_ANY, &err);
			if (v) {
				json_decref(v);
				return fail(
				    &R, SIM_EXIT_TRACE,
				    "no traceEvents array: not a PyTorch profiler (Kineto) trace (expected an object "
				    "with \"traceEvents\": [...])");
			}
			return fail(&R, SIM_EXIT_TRACE, "not JSON: line %d, column %d: %s", J->cap_line + err.line - 1,
			            err.line == 1 ? J->cap_col + err.column - 1 : err.column, err.text);
		}
		return J->code;
	}
	js_expect(J, '{', "'{'");
	if (js_peek(J) == '}')
		js_expect(J, '}', "'}'");
	else
		for (;;) {
			char key[64];
			if (js_key(J, key, sizeof key)) {
				rc = J->code;
				break;
			}
			if (!strcmp(key, "traceEvents")) {
				if ((rc = take_events(&R, J, maxev, o)) != 0)
					break;
				events = 1;
			} else if (js_capture(J)) {
				rc = J->code;
				break;
			} else if ((!strcmp(key, "distributedInfo") || !strcmp(key, "deviceProperties")) &&
			           (rc = take_meta(&R, J, key, r)) != 0) {
				break;
			}
			c = js_peek(J);
			if (c == '}') {
				js_expect(J, '}', "'}'");
				break;
			}
			if (js_expect(J, ',', "',' or '}' after an object's member")) {
				rc = J->code;
				break;
			}
		}
	if (!rc && js_end(J))
		rc = J->code;
	if (!rc && !events)
		rc = fail(&R, SIM_EXIT_TRACE,
		          "no traceEvents array: not a PyTorch profiler (Kineto) trace (expected an object with "
		          "\"traceEvents\": [...])");
	if (!rc)
		rc = build(&R, o, r);
	if (!rc && r->n == 0)
		rc = fail(&R, SIM_EXIT_TRACE,
		          "no GPU kernel, copy or memset launched inside the trace (expected events of cat \"kernel\" "
		          "whose args.correlation matches a cuda_runtime call)");
	for (long i = 0; i < R.ng; i++) {
		free(R.g[i].cat);
		free(R.g[i].name);
		json_decref(R.g[i].args);
	}
	for (long i = 0; i < R.nrt; i++)
		free(R.rt[i].name);
	for (long i = 0; i < R.nc; i++) {
		free(R.c[i].name);
		json_decref(R.c[i].args);
	}
	free(R.g);
	free(R.rt);
	free(R.c);
	if (rc) {
		kin_rank_free(r);
		r->path = name;
	}
	return rc;
}

int kin_read(const char *data, size_t len, const char *name, const struct imp_options *o, int index, struct kin_rank *r,
             char *why, size_t whylen)
{
	struct js J;
	long long max = o && o->max_bytes > 0 ? o->max_bytes : (long long)len;
	js_open_mem(&J, data, len, name, max, why, whylen);
	int rc = kin_read_js(&J, name, o, index, r, why, whylen);
	js_close(&J);
	return rc;
}

void kin_rank_free(struct kin_rank *r)
{
	for (long i = 0; i < r->n; i++)
		free(r->it[i].group);
	free(r->it);
	r->it = NULL;
	r->n = r->cap = 0;
}
