/*
 * timeline_kineto.c -- a replay's timeline in the form of a PyTorch
 * profiler (Kineto) trace, one file per rank, for the tools that read
 * measured traces: Holistic Trace Analysis (a directory of per-rank files,
 * each with distributedInfo.rank) and Perfetto, beside a measured trace of
 * the same job.
 *
 * As Kineto writes them: the GPU's events on process `pid` = the device
 * index (0: one device per rank file) and thread `tid` = the stream's id,
 * with args.device and args.stream; kernels `cat` "kernel", copies
 * "gpu_memcpy"; collectives and transfers as NCCL kernels
 * (ncclDevKernel_AllReduce_..., ncclDevKernel_SendRecv), whose "nccl" is
 * how HTA tells communication from computation; deviceProperties from the
 * config. Delays on a host stream (named host or cpu...) are `cpu_op`s of
 * the host process. A stream's id is its number when its name is one (7,
 * or s7 as sim import writes Kineto's stream 7), else 1000 + its index.
 * No runtime (launch) events are written: the replay does not model the
 * host's calls, and none are made up. A device op's kernel starts after its
 * launch gap (dm_result.gap_s, model.launch_gap), so its duration is
 * the one a profiler would record and kernels of a busy stream do not touch.
 */
#include "json.h"
#include "report.h"

#include <ctype.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

static long stream_id(const struct trace *t, int s)
{
	const char *n = tr_stream_name(t, s);
	const char *p = n[0] == 's' ? n + 1 : n;
	if (*p && strlen(p) < 9) {
		const char *q = p;
		while (isdigit((unsigned char)*q))
			q++;
		if (!*q)
			return atol(p);
	}
	return 1000 + s;
}

static int host_stream(const struct trace *t, int s)
{
	const char *n = tr_stream_name(t, s);
	return !strcmp(n, "host") || !strncmp(n, "cpu", 3);
}

/* NCCL's kernel name for a collective: ncclDevKernel_AllReduce_Sum_RING. An all-to-all and a ring step
   (op=shift) are point-to-point in NCCL (grouped ncclSend/ncclRecv), whose kernel is ncclDevKernel_SendRecv,
   named without an algorithm. */
static void nccl_name(const char *text, int algo, char *buf, size_t len)
{
	static const char *const map[][2] = {
	    {"allreduce", "AllReduce_Sum"}, {"allgather", "AllGather"}, {"reducescatter", "ReduceScatter_Sum"},
	    {"alltoall", "SendRecv"},       {"broadcast", "Broadcast"}, {"reduce", "Reduce_Sum"},
	    {"barrier", "AllReduce_Sum"},   {"shift", "SendRecv"},
	};
	const char *op = strstr(text, "op=");
	const char *kn = "AllReduce_Sum";
	for (size_t i = 0; op && i < sizeof map / sizeof map[0]; i++) {
		size_t k = strlen(map[i][0]);
		if (!strncmp(op + 3, map[i][0], k) && (op[3 + k] == ' ' || !op[3 + k]))
			kn = map[i][1];
	}
	if (!strcmp(kn, "SendRecv")) {
		snprintf(buf, len, "ncclDevKernel_SendRecv");
		return;
	}
	char a[16];
	snprintf(a, sizeof a, "%s", algo >= 0 ? coll_algo_name(algo) : "ring");
	for (char *p = a; *p; p++)
		*p = (char)toupper((unsigned char)*p);
	snprintf(buf, len, "ncclDevKernel_%s_%s", kn, a);
}

/* A copy op's Kineto name: Memcpy HtoD / DtoH / DtoD. */
static const char *copy_name(const char *text)
{
	int from_host = strstr(text, "src=host") != NULL, to_host = strstr(text, "dst=host") != NULL;
	return from_host && !to_host   ? "Memcpy HtoD (Pageable -> Device)"
	       : to_host && !from_host ? "Memcpy DtoH (Device -> Pageable)"
	                               : "Memcpy DtoD (Device -> Device)";
}

int report_timeline_kineto(const struct report *rep, FILE *f, int rank)
{
	const struct rp_result *r = rep->r;
	const struct trace *t = rep->trace;
	int src = r->rep_of ? r->rep_of[rank] : rank; /* a folded rank's ops are its representative's */
	fprintf(f,
	        "{\n\"schemaVersion\": 1,\n\"distributedInfo\": {\"backend\": \"nccl\", \"rank\": %d, "
	        "\"world_size\": %d},\n",
	        rank, r->ranks);
	fprintf(f, "\"deviceProperties\": [{\"id\": 0, \"name\": ");
	json_put_string(f, rep->chip->name);
	fprintf(f, ", \"totalGlobalMem\": %.0f, \"numSms\": %ld}],\n", rep->chip->dram.size_bytes,
	        arch_total_units(rep->chip));
	fprintf(f, "\"otherData\": {\"generator\": \"sim run --timeline-kineto\", \"config\": ");
	json_put_string(f, rep->chip->path);
	fprintf(f, ", \"trace\": ");
	json_put_string(f, tr_path(t));
	fprintf(f, ", \"step_time_s\": %.9g", r->time_s);
	if (src != rank)
		fprintf(f, ", \"replayed_as_rank\": %d", src); /* folded: a symmetric copy of that rank */
	fprintf(f, "},\n");
	fprintf(f, "\"traceEvents\": [\n");
	fprintf(
	    f, "{\"ph\": \"M\", \"name\": \"process_name\", \"pid\": 0, \"tid\": 0, \"args\": {\"name\": \"GPU 0\"}},\n"
	       "{\"ph\": \"M\", \"name\": \"process_name\", \"pid\": 1, \"tid\": 0, \"args\": {\"name\": \"host\"}}");
	int ns = tr_nstreams(t);
	char *named = calloc((size_t)ns + 1, 1);
	if (!named)
		return -1;
	long corr = 0;
	struct rp_span_iter it;
	rp_span_iter_init(&it, r);
	for (const struct rp_span *s; (s = rp_span_iter_next(&it));) {
		if (s->rank != src || s->kind == TK_MARK || s->kind == TK_MEM)
			continue;
		int host = s->kind == TK_DELAY && host_stream(t, s->stream);
		long sid = stream_id(t, s->stream);
		if (!named[s->stream]) {
			named[s->stream] = 1;
			fprintf(f,
			        ",\n{\"ph\": \"M\", \"name\": \"thread_name\", \"pid\": %d, \"tid\": %ld, \"args\": "
			        "{\"name\": ",
			        host, sid);
			char nm[96];
			snprintf(nm, sizeof nm, "%s %s", host ? "thread" : "stream", tr_stream_name(t, s->stream));
			json_put_string(f, nm);
			fprintf(f, "}}");
		}
		const char *text = r->texts[s->text], *cat = host ? "cpu_op" : "kernel";
		char name[160];
		if (s->kind == TK_COLL)
			nccl_name(text, s->algo, name, sizeof name);
		else if (s->kind == TK_SEND || s->kind == TK_RECV)
			snprintf(name, sizeof name, "ncclDevKernel_SendRecv");
		else if (s->kind == TK_OP && !strncmp(text, "copy ", 5)) {
			snprintf(name, sizeof name, "%s", copy_name(text));
			cat = "gpu_memcpy";
		} else /* the op's line names the kernel: one name per kind and shape, as HTA groups them */
			snprintf(name, sizeof name, "%.150s", text);
		fprintf(f, ",\n{\"ph\": \"X\", \"cat\": \"%s\", \"name\": ", cat);
		json_put_string(f, name);
		/* whole nanoseconds, the end rounded as the next start is: spans that touch still touch; a device op's
		   kernel starts after its launch gap, its duration what a profiler would time */
		long long t0 = llround((s->t0 + s->gap_s) * 1e9), t1 = llround(s->t1 * 1e9);
		fprintf(f, ", \"pid\": %d, \"tid\": %ld, \"ts\": %lld.%03lld, \"dur\": %lld.%03lld, \"args\": {", host,
		        sid, t0 / 1000, t0 % 1000, (t1 - t0) / 1000, (t1 - t0) % 1000);
		if (!host)
			fprintf(f, "\"device\": 0, \"stream\": %ld, \"correlation\": %ld, ", sid, ++corr);
		fprintf(f, "\"op\": ");
		json_put_string(f, text);
		fprintf(f, ", \"line\": %d", s->line);
		if (s->flops > 0)
			fprintf(f, ", \"flops\": %.9g", s->flops);
		if (s->bytes > 0)
			fprintf(f, ", \"bytes\": %.9g", s->bytes);
		fprintf(f, "}}");
	}
	fprintf(f, "\n]\n}\n");
	free(named);
	return ferror(f) ? -1 : 0;
}
