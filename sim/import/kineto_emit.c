/*
 * kineto_emit.c -- writes the ranks kineto.c read as one simtrace 1 job,
 * and the coverage report.
 *
 * Scheduling (docs/import.md, "How the replay is scheduled"):
 *  - every GPU stream of the trace is a stream `sN` (N: Kineto's stream id);
 *    the host is a stream `host` of delays, the time between consecutive
 *    runtime calls of all the rank's threads in time order;
 *  - a GPU op waits (after=h) for the host delay that ends at its launch,
 *    so it starts at max(its launch, its stream's previous op): a GPU that
 *    was busy keeps no gap, one that waited for the host keeps it;
 *  - a synchronize makes the host wait (a zero delay after= every stream
 *    used so far), and the host's time then runs on from the call's end;
 *  - a cudaStreamWaitEvent makes the next GPU op wait for the latest op of
 *    every other stream used so far (Kineto does not record which event).
 */
#include "arch.h"
#include "import_int.h"

#include <stdlib.h>
#include <string.h>

#define MAX_STREAMS 64

struct emit {
	FILE *f;
	int streams[MAX_STREAMS]; /* Kineto stream ids used so far by this rank */
	int nstreams;
	long long host_ns;           /* the host's time the delays have reached */
	int have_h;                  /* a delay with id=h was issued */
	const struct imp_options *o; /* --recorded-on: carried kernels scale (imp_write_scale); may be NULL */
};

static void use_stream(struct emit *E, int s)
{
	for (int i = 0; i < E->nstreams; i++)
		if (E->streams[i] == s)
			return;
	if (E->nstreams < MAX_STREAMS)
		E->streams[E->nstreams++] = s;
}

static void advance_host(struct emit *E, long long t)
{
	if (E->o && E->o->host_graph) /* the host keeps ahead: nothing to wait for */
		E->host_ns = t > E->host_ns ? t : E->host_ns;
	else if (t > E->host_ns) {
		fprintf(E->f, "delay time=%lldns stream=host id=h\n", t - E->host_ns);
		E->host_ns = t;
		E->have_h = 1;
	}
}

/* The host waits for the latest op of each stream in streams (at most 8 a line). */
static void host_waits(struct emit *E, const int *streams, int n)
{
	for (int i = 0; i < n; i += 8) {
		fprintf(E->f, "delay time=0ns stream=host id=h after=");
		for (int j = i; j < n && j < i + 8; j++)
			fprintf(E->f, "%sk%d", j > i ? "," : "", streams[j]);
		fputc('\n', E->f);
		E->have_h = 1;
	}
}

/* ---- communicators ---- */

#define WORLD (-2) /* comm_of: the whole job's group, with --ranks */

struct groups {
	int **g; /* trace ranks, increasing */
	int *n;
	int count;
};

static int same(const int *a, int na, const int *b, int nb)
{
	return na == nb && !memcmp(a, b, (size_t)na * sizeof *a);
}

/* The trace ranks of it's group, or -1 when a member was not imported
   (or the rank itself is not in it). Writes into tr[]. */
static int group_ranks(const struct kin_item *it, const struct kin_rank *ranks, int n, int self, int *tr)
{
	int in = 0;
	for (int i = 0; i < it->ngroup; i++) {
		int lo = 0, hi = n; /* ranks[] is sorted by job rank */
		while (lo < hi) {
			int mid = (lo + hi) / 2;
			if (ranks[mid].job_rank < it->group[i])
				lo = mid + 1;
			else
				hi = mid;
		}
		if (lo >= n || ranks[lo].job_rank != it->group[i])
			return -1;
		tr[i] = lo;
		in |= lo == self;
	}
	return in && it->ngroup > 1 ? it->ngroup : -1;
}

static int group_index(struct groups *G, const int *tr, int n)
{
	for (int i = 0; i < G->count; i++)
		if (same(G->g[i], G->n[i], tr, n))
			return i;
	int **g = realloc(G->g, (size_t)(G->count + 1) * sizeof *g);
	if (g)
		G->g = g;
	int *nn = realloc(G->n, (size_t)(G->count + 1) * sizeof *nn);
	if (nn)
		G->n = nn;
	int *c = malloc((size_t)n * sizeof *c);
	if (!g || !nn || !c) {
		free(c);
		return -1;
	}
	memcpy(c, tr, (size_t)n * sizeof *c);
	G->g[G->count] = c;
	G->n[G->count] = n;
	return G->count++;
}

/* ---- statistics ---- */

static void count(struct kin_rank *r)
{
	struct imp_stats *st = &r->st;
	long long first = 0, last = 0, host_last = 0;
	int any = 0;
	for (long i = 0; i < r->n; i++) {
		const struct kin_item *it = &r->it[i];
		if (it->host_ns > host_last)
			host_last = it->host_ns;
		if (it->hk != HK_LAUNCH)
			continue;
		double us = (double)it->dur_ns / 1e3;
		st->items[it->fam]++;
		st->gpu_us[it->fam] += us;
		if (it->how != KH_CARRIED) {
			st->modelled_items[it->fam]++;
			st->modelled_us[it->fam] += us;
		}
		if (!any || it->start_ns < first)
			first = it->start_ns;
		if (!any || it->start_ns + it->dur_ns > last)
			last = it->start_ns + it->dur_ns;
		any = 1;
	}
	st->span_us = (double)(last - first) / 1e3;
	st->host_us = (double)host_last / 1e3;
}

static void add_stats(struct imp_stats *a, const struct imp_stats *b)
{
	for (int f = 0; f < IF_COUNT; f++) {
		a->items[f] += b->items[f];
		a->modelled_items[f] += b->modelled_items[f];
		a->gpu_us[f] += b->gpu_us[f];
		a->modelled_us[f] += b->modelled_us[f];
	}
	a->outside += b->outside;
	a->outside_us += b->outside_us;
	if (b->span_us > a->span_us)
		a->span_us = b->span_us;
	if (b->host_us > a->host_us)
		a->host_us = b->host_us;
	a->ops += b->ops;
	a->delays += b->delays;
	a->colls += b->colls;
}

void imp_report(FILE *f, const struct imp_stats *st, const char *p)
{
	double tm = 0, tmod = 0;
	long ti = 0, tmi = 0;
	fprintf(f, "%sfamily       kernels modelled  measured ms  modelled ms   carried ms  modelled%%\n", p);
	for (int k = 0; k < IF_COUNT; k++) {
		double m = st->gpu_us[k] / 1e3, mod = st->modelled_us[k] / 1e3;
		fprintf(f, "%s%-12s %7ld %8ld %12.3f %12.3f %12.3f %9.1f\n", p, imp_family_name((enum imp_family)k),
		        st->items[k], st->modelled_items[k], m, mod, m - mod, m > 0 ? 100 * mod / m : 0.0);
		tm += m;
		tmod += mod;
		ti += st->items[k];
		tmi += st->modelled_items[k];
	}
	fprintf(f, "%s%-12s %7ld %8ld %12.3f %12.3f %12.3f %9.1f\n", p, "total", ti, tmi, tm, tmod, tm - tmod,
	        tm > 0 ? 100 * tmod / tm : 0.0);
	fprintf(f,
	        "%smeasured GPU span %.3f ms (first start to last end of the imported items, longest rank); host "
	        "calls over %.3f ms\n",
	        p, st->span_us / 1e3, st->host_us / 1e3);
	if (st->chakra)
		fprintf(f, "%sleft out: %ld dependencies on nodes the trace does not hold, %ld of a node on itself\n",
		        p, st->missing_deps, st->self_deps);
	else
		fprintf(f, "%sleft out: %ld GPU items launched before the trace's window (%.3f ms)\n", p, st->outside,
		        st->outside_us / 1e3);
	fprintf(
	    f,
	    "%swritten: %ld device ops, %ld collectives, %ld kernels as delays of their measured time, on %d rank%s\n",
	    p, st->ops, st->colls, st->delays, st->ranks, st->ranks == 1 ? "" : "s");
	if (st->ref[0])
		fprintf(f,
		        "%scarried kernels scale from %s on another chip: elementwise and memcpy with device-memory "
		        "bandwidth, gemm and attention with the fp16 matrix peak, the rest kept\n",
		        p, st->ref);
	else
		fprintf(f,
		        "%scarried kernels keep their measured time on any chip (--recorded-on CONFIG scales them)\n",
		        p);
	if (st->device[0])
		fprintf(f, "%srecorded on %s (%d SMs or CUs, %.1f GiB), as the trace's deviceProperties name it\n", p,
		        st->device, st->device_units, st->device_mem_B / 1073741824.0);
	else if (st->device_units > 0)
		fprintf(
		    f,
		    "%srecorded on a device the trace does not name, of %d SMs (its kernels' grids over their blocks "
		    "per SM)\n",
		    p, st->device_units);
}

/* ---- the trace ---- */

/* One GPU item on its stream, after the host's delay up to its launch and
   (others[0..no), at most 7) the latest op of those streams. */
static void emit_item(struct emit *E, const struct kin_item *it, const char *comm_name, const int *others, int no)
{
	FILE *f = E->f;
	advance_host(E, it->host_ns);
	switch (it->how) {
	case KH_MODELLED: /* from a CUDA graph (--host graph): the gap before it is the graph's */
		fprintf(f, "%s%s", it->text, E->o && E->o->host_graph ? " launch=graph" : "");
		break;
	case KH_COLL: fprintf(f, "coll op=%s comm=%s bytes=%.0f", it->coll, comm_name, it->bytes); break;
	default:
		fprintf(f, "delay time=%lldns", it->dur_ns > 0 ? it->dur_ns : 0);
		if (it->how == KH_CARRIED)
			imp_write_scale(f, E->o, it->fam);
		break;
	}
	fprintf(f, " stream=s%d id=k%d", it->stream, it->stream);
	for (int i = 0; i < no + E->have_h; i++) {
		fputs(i ? "," : " after=", f);
		if (i < no)
			fprintf(f, "k%d", others[i]);
		else
			fputc('h', f);
	}
	fprintf(f, "  # %s %s %.3fus %s\n", imp_family_name(it->fam), it->how == KH_CARRIED ? "carried" : "modelled",
	        (double)(it->how == KH_MODELLED ? it->op_ns : it->dur_ns) / 1e3, it->name);
	use_stream(E, it->stream);
}

static int job_cmp(const void *a, const void *b)
{
	const struct kin_rank *x = a, *y = b;
	return (x->job_rank > y->job_rank) - (x->job_rank < y->job_rank);
}

/* With one file standing for every rank of a job of `sym` ranks: the
   group is that whole job (ranks 0 .. sym-1), so every rank can run it. */
static int whole_job(const struct kin_item *it, int sym)
{
	if (it->ngroup != sym)
		return 0;
	for (int i = 0; i < it->ngroup; i++)
		if (it->group[i] != i)
			return 0;
	return 1;
}

int kin_emit(FILE *out, struct kin_rank *ranks, int n, int sym, const struct imp_options *o, struct imp_stats *st,
             char *why, size_t whylen)
{
	qsort(ranks, (size_t)n, sizeof *ranks, job_cmp);
	for (int i = 1; i < n; i++)
		if (ranks[i].job_rank == ranks[i - 1].job_rank) {
			snprintf(why, whylen, "%s: rank %d twice: %s is rank %d too (expected one file per rank)",
			         ranks[i].path, ranks[i].job_rank, ranks[i - 1].path, ranks[i].job_rank);
			return SIM_EXIT_TRACE;
		}
	/* communicators: every group whose members were all imported; a
	   collective on any other group keeps its measured time */
	struct groups G = {0};
	int *tr = malloc((size_t)(1 << 20) * sizeof *tr);
	int **comm_of = calloc((size_t)n, sizeof *comm_of);
	int rc = tr && comm_of ? 0 : SIM_EXIT_INTERNAL;
	for (int r = 0; r < n && !rc; r++) {
		comm_of[r] = malloc((size_t)(ranks[r].n + 1) * sizeof **comm_of);
		if (!comm_of[r]) {
			rc = SIM_EXIT_INTERNAL;
			break;
		}
		for (long i = 0; i < ranks[r].n; i++) {
			struct kin_item *it = &ranks[r].it[i];
			comm_of[r][i] = -1;
			if (it->hk != HK_LAUNCH || it->how != KH_COLL)
				continue;
			if (sym > 1) { /* every rank runs this file's items: only the whole job's group is known */
				if (whole_job(it, sym))
					comm_of[r][i] = WORLD;
				else
					it->how = KH_CARRIED;
				continue;
			}
			int m = group_ranks(it, ranks, n, r, tr);
			int gi = m > 0 ? group_index(&G, tr, m) : -1;
			if (m > 0 && gi < 0) {
				rc = SIM_EXIT_INTERNAL;
				break;
			}
			if (gi < 0)
				it->how = KH_CARRIED;
			comm_of[r][i] = gi;
		}
	}
	if (rc) {
		snprintf(why, whylen, "out of memory");
		goto out;
	}
	memset(st, 0, sizeof *st);
	st->ranks = sym > 1 ? sym : n;
	if (o && o->ref_name)
		snprintf(st->ref, sizeof st->ref, "%s", o->ref_name);
	snprintf(st->device, sizeof st->device, "%s", ranks[0].device);
	st->device_units = ranks[0].device_units;
	st->device_mem_B = ranks[0].device_mem_B;
	for (int r = 0; r < n; r++) {
		count(&ranks[r]);
		add_stats(st, &ranks[r].st);
	}
	for (int g = 0; g < G.count; g++)
		if (G.n[g] != n && (rc = imp_check_group(g, G.g[g], G.n[g], 1, why, whylen)))
			goto out;
	/* the lines' counts are known once written: count them first */
	struct imp_stats lines = *st;
	lines.ops = lines.colls = lines.delays = 0;
	for (int r = 0; r < n; r++)
		for (long i = 0; i < ranks[r].n; i++) {
			const struct kin_item *it = &ranks[r].it[i];
			if (it->hk != HK_LAUNCH || it->how == KH_COVERED)
				continue;
			if (it->how == KH_MODELLED)
				lines.ops++;
			else if (it->how == KH_COLL)
				lines.colls++;
			else
				lines.delays++;
		}
	*st = lines;

	fprintf(out, "simtrace 1\n# imported by `sim import kineto` (docs/import.md) from:\n");
	for (int r = 0; r < n; r++)
		fprintf(out, "#   rank %d: %s%s%s\n", r, ranks[r].path,
		        ranks[r].has_rank ? "" : " (no distributedInfo)",
		        sym > 1 ? " (every rank of the job runs it: --ranks)" : "");
	fprintf(out, "# Measured GPU time and what the model now times (the rest keeps its measured time):\n");
	imp_report(out, st, "# ");
	fprintf(out, "ranks %d\n", sym > 1 ? sym : n);
	char name[48] = "world";
	for (int g = 0; g < G.count; g++) {
		if (G.n[g] == n)
			continue; /* world */
		fprintf(out, "comm pg%d ranks=", g);
		imp_write_ranks(out, G.g[g], G.n[g]);
		fputc('\n', out);
	}
	for (int r = 0; r < n; r++) {
		struct emit E = {.f = out, .o = o};
		int pending_wait = 0;
		if (n > 1)
			fprintf(out, "on rank=%d {\n", r);
		for (long i = 0; i < ranks[r].n; i++) {
			const struct kin_item *it = &ranks[r].it[i];
			if (it->hk == HK_SYNC) {
				advance_host(&E, it->host_ns);
				host_waits(&E, E.streams, E.nstreams);
				if (it->host_end_ns > E.host_ns)
					E.host_ns = it->host_end_ns;
				continue;
			}
			if (it->hk == HK_WAIT) {
				pending_wait = 1;
				continue;
			}
			if (it->how == KH_COVERED)
				continue;
			int cg = comm_of[r][i];
			if (cg == WORLD)
				snprintf(name, sizeof name, "world");
			else if (cg >= 0)
				snprintf(name, sizeof name, G.n[cg] == n ? "world" : "pg%d", cg);
			/* after a cudaStreamWaitEvent the next op waits for every other
			   stream's latest op (up to 7) */
			int others[7], no = 0;
			for (int s = 0; pending_wait && s < E.nstreams && no < 7; s++)
				if (E.streams[s] != it->stream)
					others[no++] = E.streams[s];
			pending_wait = 0;
			emit_item(&E, it, name, others, no);
			if (it->sync_after) {
				int s = it->stream;
				host_waits(&E, &s, 1);
				if (it->host_end_ns > E.host_ns)
					E.host_ns = it->host_end_ns;
			}
		}
		if (n > 1)
			fprintf(out, "}\n");
	}
out:
	for (int g = 0; g < G.count; g++)
		free(G.g[g]);
	free(G.g);
	free(G.n);
	for (int r = 0; comm_of && r < n; r++)
		free(comm_of[r]);
	free(comm_of);
	free(tr);
	return rc;
}
