/*
 * report_out.c -- the forms a `sim run` report is written in (report.c
 * derives it once from the replay's spans): the text summary, JSON
 * (schema_version 1), the CSV files (ranks, ops, kinds) and the Chrome /
 * Perfetto timeline. Each reads the finished struct report and the spans;
 * none computes a figure the others could disagree on.
 */
#include "report.h"

#include "csv.h"
#include "json.h"
#include "model.h"
#include "outfile.h"
#include "platform.h"

#include <assert.h>
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

/* ---- text ---- */

static double pct(double a, double b)
{
	return b > 0 ? 100 * a / b : 0;
}

static void span_line(const struct report *rep, int i, FILE *f)
{
	const struct rp_span *s = &rep->crit[i];
	char d[32], at[32];
	report_tfmt(rep->crit_d[i], d, sizeof d);
	report_tfmt(s->t0, at, sizeof at);
	fprintf(f, "    %-10s at %-10s rank %-4d line %-4d %s\n", d, at, s->rank, s->line, rep->r->texts[s->text]);
}

void report_text(const struct report *rep, const char *config_path, FILE *f)
{
	const struct rp_result *r = rep->r;
	char b1[32], b2[32], b3[32], b4[32], b5[32], b6[32], sys[512];
	platform_describe(rep->chip, &r->topo, sys, sizeof sys);
	fprintf(f, "%s on %s\n", tr_path(rep->trace), config_path);
	fprintf(f, "  system       %s\n", sys);
	rep_placement_text(rep, f);
	report_tfmt(r->time_s, b1, sizeof b1);
	fprintf(f, "  step time    %s\n", b1);
	if (rep->peak > 0)
		fprintf(f,
		        "  throughput   %.4g TFLOP/s per device executed, HFU %.1f%% (of the %.4g TFLOP/s %s peak)\n",
		        rep->tflops_dev, 100 * rep->hfu, rep->peak / 1e12, arch_dtype_name((enum arch_dtype)r->dtype));
	report_work_text(rep, f);
	const struct rep_rank *m = &rep->mean;
	report_tfmt(m->busy, b1, sizeof b1);
	report_tfmt(m->compute, b2, sizeof b2);
	report_tfmt(m->comm, b3, sizeof b3);
	report_tfmt(m->exposed, b4, sizeof b4);
	report_tfmt(m->wait, b5, sizeof b5);
	report_tfmt(m->idle, b6, sizeof b6);
	fprintf(f, "  per rank     (mean of %d) busy %s (%.1f%%), idle %s\n", r->ranks, b1, pct(m->busy, r->time_s),
	        b6);
	fprintf(
	    f,
	    "               compute %s (%.1f%%), communication %s, exposed %s (%.1f%%), waiting for peers %s (in the "
	    "idle time and other streams' work)\n",
	    b2, pct(m->compute, r->time_s), b3, b4, pct(m->exposed, r->time_s), b5);
	fprintf(f, "\n  time by op kind (summed over ranks)\n");
	for (int i = 0; i < rep->nkinds; i++) {
		report_tfmt(rep->kinds[i].time_s, b1, sizeof b1);
		fprintf(f, "    %-14s %8ld ops  %12s  %5.1f%%\n", rep->kinds[i].name, rep->kinds[i].count, b1,
		        pct(rep->kinds[i].time_s, rep->total_op_time));
	}
	if (rep->ncolls) {
		fprintf(f, "\n  collectives (per call; bus bandwidth as nccl-tests counts it)\n");
		for (int i = 0; i < rep->ncolls; i++) {
			const struct rep_group *g = &rep->colls[i];
			report_tfmt(g->time_s / g->count, b1, sizeof b1);
			fprintf(f, "    %-44s x%-6ld %10s  %s/%s  busbw %.4g GB/s\n", g->name, g->count, b1,
			        coll_algo_name(g->algo), coll_proto_name((enum coll_proto)g->proto), g->extra / 1e9);
		}
	}
	report_work_text_groups(rep, f);
	if (rep->nmarks) {
		fprintf(f, "\n  regions (mark): longest span over ranks, compute per rank\n");
		for (int i = 0; i < rep->nmarks; i++) {
			report_tfmt(rep->marks[i].time_s, b1, sizeof b1);
			report_tfmt(rep->marks[i].extra, b2, sizeof b2);
			fprintf(f, "    %-20s %12s  compute %s\n", rep->marks[i].name, b1, b2);
		}
	}
	fprintf(f, "\n  top bottlenecks (ops by total time over ranks)\n");
	for (int i = 0; i < rep->ntop; i++) {
		const struct rep_group *g = &rep->top[i];
		report_tfmt(g->time_s, b1, sizeof b1);
		fprintf(f, "    %5.1f%%  %10s  x%-6ld %-8s %s\n", 100 * g->extra, b1, g->count,
		        g->bound >= 0  ? dm_bound_name((enum dm_bound)g->bound)
		        : g->algo >= 0 ? "comm"
		                       : "",
		        g->name);
	}
	report_tfmt(rep->crit_compute, b1, sizeof b1);
	report_tfmt(rep->crit_comm, b2, sizeof b2);
	report_tfmt(rep->crit_wait, b3, sizeof b3);
	fprintf(f, "\n  critical path: %ld ops; compute %s, communication %s, gaps %s; longest:\n", rep->crit_len, b1,
	        b2, b3);
	for (int i = 0; i < rep->ncrit; i++)
		span_line(rep, i, f);
	fprintf(f, "\n  replayed %ld ops with %ld engine activities", r->events, r->sg_activities);
	if (r->nsteady)
		fprintf(f, "; %ld ops derived from %d steady state%s (--exact plays them)", r->derived, r->nsteady,
		        r->nsteady == 1 ? "" : "s");
	fprintf(f, "\n");
}

/* ---- JSON ---- */

static void json_rank(struct json *j, const char *key, const struct rep_rank *x)
{
	json_obj(j, key);
	json_num(j, "busy_s", x->busy);
	json_num(j, "compute_s", x->compute);
	json_num(j, "comm_s", x->comm);
	json_num(j, "exposed_comm_s", x->exposed);
	json_num(j, "wait_s", x->wait);
	json_num(j, "idle_s", x->idle);
	json_obj_end(j);
}

static void json_span(struct json *j, const struct report *rep, int i)
{
	const struct rp_span *s = &rep->crit[i];
	json_obj(j, NULL);
	json_int(j, "rank", s->rank);
	json_int(j, "line", s->line);
	json_str(j, "op", rep->r->texts[s->text]);
	json_num(j, "start_s", s->t0);
	json_num(j, "time_s", rep->crit_d[i]);
	json_obj_end(j);
}

/* What made this output: sim's version, the command line, the config file
   with its --set overrides and the fingerprint of the chip they gave
   (arch_chip_fingerprint: equal for equal parameters), the trace. */
static void provenance_json(const struct report *rep, const char *config_path, struct json *j)
{
	char fp[32];
	snprintf(fp, sizeof fp, "%016llx", (unsigned long long)arch_chip_fingerprint(rep->chip));
	json_obj(j, "provenance");
	if (rep->version)
		json_str(j, "sim_version", rep->version);
	else
		json_nil(j, "sim_version");
	json_arr(j, "command");
	if (rep->argc > 0)
		json_str(j, NULL, "sim");
	for (int i = 0; i < rep->argc; i++)
		json_str(j, NULL, rep->argv[i]);
	json_arr_end(j);
	json_str(j, "config", config_path);
	json_str(j, "config_fingerprint", fp);
	json_arr(j, "overrides");
	for (int i = 0; i < rep->chip->nsets; i++)
		json_str(j, NULL, rep->chip->sets[i]);
	json_arr_end(j);
	json_str(j, "trace", tr_path(rep->trace));
	json_obj_end(j);
}

void report_json(const struct report *rep, const char *config_path, FILE *f)
{
	const struct rp_result *r = rep->r;
	struct json j;
	char sys[512];
	platform_describe(rep->chip, &r->topo, sys, sizeof sys);
	json_begin(&j, f, 1);
	json_obj(&j, NULL);
	json_int(&j, "schema_version", 2);
	json_str(&j, "config", config_path);
	json_str(&j, "trace", tr_path(rep->trace));
	provenance_json(rep, config_path, &j);
	json_num(&j, "time_s", r->time_s);
	json_int(&j, "ranks", r->ranks);
	json_int(&j, "nodes", r->topo.nodes);
	json_int(&j, "ranks_per_node", r->topo.dpn);
	json_str(&j, "system", sys);
	json_num(&j, "flops", rep->flops);
	json_num(&j, "tflops_per_device", rep->tflops_dev);
	json_num_or_null(&j, "peak_tflops", rep->peak / 1e12);
	if (r->dtype >= 0)
		json_str(&j, "dtype", arch_dtype_name((enum arch_dtype)r->dtype));
	else
		json_nil(&j, "dtype");
	json_num_or_null(&j, "hfu", rep->hfu);
	json_num_or_null(&j, "mfu", rep->has_workload && rep->peak > 0 && rep->model_mfu > 0 ? rep->model_mfu : NAN);
	report_work_json(rep, &j);
	json_rank(&j, "rank_mean", &rep->mean);
	json_rank(&j, "rank_max", &rep->max);
	json_arr(&j, "by_kind");
	for (int i = 0; i < rep->nkinds; i++) {
		json_obj(&j, NULL);
		json_str(&j, "kind", rep->kinds[i].name);
		json_int(&j, "count", rep->kinds[i].count);
		json_num(&j, "time_s", rep->kinds[i].time_s);
		json_obj_end(&j);
	}
	json_arr_end(&j);
	json_arr(&j, "collectives");
	for (int i = 0; i < rep->ncolls; i++) {
		const struct rep_group *g = &rep->colls[i];
		json_obj(&j, NULL);
		json_str(&j, "op", g->name);
		json_int(&j, "count", g->count);
		json_num(&j, "time_s", g->time_s / g->count);
		json_str(&j, "algo", coll_algo_name(g->algo));
		json_str(&j, "proto", coll_proto_name((enum coll_proto)g->proto));
		json_num(&j, "busbw_GBps", g->extra / 1e9);
		json_obj_end(&j);
	}
	json_arr_end(&j);
	json_arr(&j, "marks");
	for (int i = 0; i < rep->nmarks; i++) {
		json_obj(&j, NULL);
		json_str(&j, "name", rep->marks[i].name);
		json_num(&j, "time_s", rep->marks[i].time_s);
		json_num(&j, "compute_s", rep->marks[i].extra);
		json_obj_end(&j);
	}
	json_arr_end(&j);
	json_arr(&j, "top");
	for (int i = 0; i < rep->ntop; i++) {
		const struct rep_group *g = &rep->top[i];
		json_obj(&j, NULL);
		json_str(&j, "op", g->name);
		json_int(&j, "count", g->count);
		json_num(&j, "time_s", g->time_s);
		json_num(&j, "share", g->extra);
		json_str(&j, "bound",
		         g->bound >= 0  ? dm_bound_name((enum dm_bound)g->bound)
		         : g->algo >= 0 ? "comm"
		                        : "");
		json_obj_end(&j);
	}
	json_arr_end(&j);
	json_obj(&j, "critical_path");
	json_int(&j, "ops", rep->crit_len);
	json_num(&j, "compute_s", rep->crit_compute);
	json_num(&j, "comm_s", rep->crit_comm);
	json_num(&j, "gaps_s", rep->crit_wait);
	json_arr(&j, "longest");
	for (int i = 0; i < rep->ncrit; i++)
		json_span(&j, rep, i);
	json_arr_end(&j);
	json_obj_end(&j);
	json_arr(&j, "per_rank");
	for (int k = 0; k < r->ranks; k++)
		json_rank(&j, NULL, &rep->rank[k]);
	json_arr_end(&j);
	json_obj(&j, "engine");
	json_int(&j, "ops", r->events);
	json_int(&j, "activities", r->sg_activities);
	if (r->nsteady) { /* only then: outputs of runs that derive nothing keep their keys */
		json_int(&j, "derived_ops", r->derived);
		json_int(&j, "steady_states", r->nsteady);
	}
	json_obj_end(&j);
	json_obj_end(&j);
	json_end(&j);
}

/* ---- files: written whole or not at all (sim/base/outfile.c) ---- */

int report_csv(const struct report *rep, const char *dir, char *why, size_t whylen)
{
	const struct rp_result *r = rep->r;
	char path[4096], err[256];
	struct out_file o;
	if (mkdir(dir, 0777) && errno != EEXIST) {
		snprintf(why, whylen, "sim run: cannot create directory %s: %s", dir, strerror(errno));
		return -1;
	}
	snprintf(path, sizeof path, "%s/ranks.csv", dir);
	FILE *f = out_open(path, &o, err, sizeof err);
	if (!f)
		goto fail;
	fprintf(f, "rank,busy_s,compute_s,comm_s,exposed_comm_s,wait_s,idle_s\n");
	for (int k = 0; k < r->ranks; k++) {
		const struct rep_rank *x = &rep->rank[k];
		fprintf(f, "%d,%.9g,%.9g,%.9g,%.9g,%.9g,%.9g\n", k, x->busy, x->compute, x->comm, x->exposed, x->wait,
		        x->idle);
	}
	if (out_commit(&o, err, sizeof err))
		goto fail;
	snprintf(path, sizeof path, "%s/ops.csv", dir);
	if (!(f = out_open(path, &o, err, sizeof err)))
		goto fail;
	fprintf(f, "rank,stream,line,kind,op,start_s,end_s,time_s,wait_s,bound,flops,bytes,region,profiled_s\n");
	struct rp_span_iter it;
	rp_span_iter_init(&it, r);
	for (const struct rp_span *s; (s = rp_span_iter_next(&it));) {
		char label[32];
		fprintf(f, "%d,", s->rank);
		csv_put_field(f, tr_stream_name(rep->trace, s->stream), 1);
		fprintf(f, ",%d,%s,", s->line, report_span_label(s, r, label));
		csv_put_field(f, r->texts[s->text], 1);
		fprintf(f, ",%.9g,%.9g,%.9g,%.9g,%s,%.9g,%.9g,", s->t0, s->t1, s->t1 - s->t0, s->t0 - s->arrive,
		        s->bound >= 0  ? dm_bound_name((enum dm_bound)s->bound)
		        : s->algo >= 0 ? coll_algo_name(s->algo)
		                       : "",
		        s->flops, s->bytes);
		csv_put_field(f, s->mark >= 0 ? tr_mark_name(rep->trace, s->mark) : "", 1);
		fprintf(f, ",%.9g\n", s->t1 - s->t0 - s->gap_s); /* the kernel as a profiler times it */
	}
	if (out_commit(&o, err, sizeof err))
		goto fail;
	snprintf(path, sizeof path, "%s/kinds.csv", dir);
	if (!(f = out_open(path, &o, err, sizeof err)))
		goto fail;
	fprintf(f, "kind,count,time_s\n");
	for (int i = 0; i < rep->nkinds; i++)
		fprintf(f, "%s,%ld,%.9g\n", rep->kinds[i].name, rep->kinds[i].count, rep->kinds[i].time_s);
	if (out_commit(&o, err, sizeof err))
		goto fail;
	return 0;
fail:
	snprintf(why, whylen, "sim run: cannot write %s: %s", path, err);
	return -1;
}

/* ---- timeline (Chrome trace event format, opened by Perfetto) ---- */

/* One span of the timeline as rank pid's (pid: the span's own rank, or a folded rank it stands for): the
   process and track names the first time pid's stream appears, the wait for peers, the op. */
static void timeline_span(FILE *f, const struct report *rep, const struct rp_span *s, int pid, char *named, int *first)
{
	const struct rp_result *r = rep->r;
	char label[32];
	char *nm = &named[(size_t)pid * ((size_t)tr_nstreams(rep->trace) + 1) + (size_t)s->stream];
	if (!*nm) {
		*nm = 1;
		fprintf(f, "%s{\"ph\":\"M\",\"name\":\"process_name\",\"pid\":%d,\"args\":{\"name\":\"rank %d\"}},\n",
		        *first ? "" : ",", pid, pid);
		fprintf(f, "{\"ph\":\"M\",\"name\":\"process_sort_index\",\"pid\":%d,\"args\":{\"sort_index\":%d}},\n",
		        pid, pid);
		fprintf(f, "{\"ph\":\"M\",\"name\":\"thread_name\",\"pid\":%d,\"tid\":%d,\"args\":{\"name\":\"stream ",
		        pid, s->stream + 1);
		fprintf(f, "%s\"}}", tr_stream_name(rep->trace, s->stream));
		*first = 0;
	}
	if (s->t0 > s->arrive)
		fprintf(f,
		        ",\n{\"ph\":\"X\",\"cat\":\"wait\",\"name\":\"wait for peers\",\"pid\":%d,\"tid\":%d,"
		        "\"ts\":%.6f,\"dur\":%.6f}",
		        pid, s->stream + 1, s->arrive * 1e6, (s->t0 - s->arrive) * 1e6);
	fprintf(f, "%s{\"ph\":\"X\",\"cat\":\"%s\",\"name\":", *first ? "" : ",\n",
	        tr_kind_name((enum tr_kind)s->kind));
	*first = 0;
	json_put_string(f, report_span_label(s, r, label));
	fprintf(f, ",\"pid\":%d,\"tid\":%d,\"ts\":%.6f,\"dur\":%.6f,\"args\":{\"op\":", pid, s->stream + 1, s->t0 * 1e6,
	        (s->t1 - s->t0) * 1e6);
	json_put_string(f, r->texts[s->text]);
	fprintf(f, ",\"line\":%d", s->line);
	if (pid != s->rank)
		fprintf(f, ",\"replayed_as\":%d", s->rank);
	if (s->bound >= 0)
		fprintf(f, ",\"bound\":\"%s\"", dm_bound_name((enum dm_bound)s->bound));
	if (s->algo >= 0)
		fprintf(f, ",\"algo\":\"%s\",\"proto\":\"%s\"", coll_algo_name(s->algo),
		        coll_proto_name((enum coll_proto)s->proto));
	if (s->flops > 0)
		fprintf(f, ",\"flops\":%.9g", s->flops);
	if (s->bytes > 0)
		fprintf(f, ",\"bytes\":%.9g", s->bytes);
	if (s->mark >= 0)
		fprintf(f, ",\"region\":\"%s\"", tr_mark_name(rep->trace, s->mark));
	fprintf(f, "}}");
}

int report_timeline(const struct report *rep, FILE *f, const char *keep)
{
	const struct rp_result *r = rep->r;
	fprintf(f, "{\"displayTimeUnit\":\"ns\",\"otherData\":{\"generator\":\"sim run\",\"trace\":");
	json_put_string(f, tr_path(rep->trace));
	fprintf(f, ",\"sim_version\":");
	json_put_string(f, rep->version ? rep->version : "");
	fprintf(f, ",\"config\":");
	json_put_string(f, rep->chip->path);
	fprintf(f, ",\"config_fingerprint\":\"%016llx\",\"overrides\":[",
	        (unsigned long long)arch_chip_fingerprint(rep->chip));
	for (int i = 0; i < rep->chip->nsets; i++) {
		fprintf(f, "%s", i ? "," : "");
		json_put_string(f, rep->chip->sets[i]);
	}
	fprintf(f, "],\"command\":[");
	for (int i = 0; i < rep->argc; i++) {
		fprintf(f, "%s", i ? "," : "\"sim\",");
		json_put_string(f, rep->argv[i]);
	}
	fprintf(f, "],\"step_time_s\":%.9g},\n\"traceEvents\":[\n", r->time_s);
	int first = 1, rc = 0;
	char *named = calloc((size_t)r->ranks * ((size_t)tr_nstreams(rep->trace) + 1), 1);
	/* with keep: the kept ranks each replayed rank stands for (itself, and the folded ranks whose representative
	   it is), as lists: head[q] the first, next[k] the one after k; -1 ends a list */
	int *head = keep ? malloc(sizeof(int) * (size_t)r->ranks) : NULL;
	int *next = keep ? malloc(sizeof(int) * (size_t)r->ranks) : NULL;
	if (!named || (keep && (!head || !next))) {
		rc = -1;
		goto out;
	}
	if (keep) {
		for (int k = 0; k < r->ranks; k++)
			head[k] = next[k] = -1;
		for (int k = r->ranks - 1; k >= 0; k--)
			if (keep[k]) {
				int q = r->rep_of ? r->rep_of[k] : k;
				assert(q >= 0 && q < r->ranks);
				next[k] = head[q], head[q] = k;
			}
	}
	struct rp_span_iter it;
	rp_span_iter_init(&it, r);
	for (const struct rp_span *s; (s = rp_span_iter_next(&it));) {
		if (!keep)
			timeline_span(f, rep, s, s->rank, named, &first);
		else
			for (int k = head[s->rank]; k >= 0; k = next[k])
				timeline_span(f, rep, s, k, named, &first);
	}
	fprintf(f, "\n]}\n");
	rc = ferror(f) ? -1 : 0;
out:
	free(named);
	free(head);
	free(next);
	return rc;
}
