/*
 * trace.h -- the `simtrace 1` workload trace format: parser and per-rank
 * lazy expansion (docs/trace-format.md is the user's reference).
 *
 * A trace is line-oriented text; '#' starts a comment; arguments are
 * key=value with units where a quantity is meant (bytes=48MiB, time=5us).
 *
 *   simtrace 1                         header, first non-comment line
 *   ranks 1024                         how many ranks (devices) run it
 *   layout tp=8 pp=16 dp=8             parallel layout (product = ranks);
 *                                      optional ep= cp= and order=tp,cp,ep,dp,pp
 *                                      (first = fastest-varying; that default
 *                                      is Megatron-LM's rank order)
 *   comm NAME dims=dp,ep               a communicator over several dims
 *   comm NAME ranks=0-7,12             one fixed group of ranks
 *   def NAME {  ...  }                 a named block (top level only)
 *   call NAME                          expands a def defined earlier
 *   repeat N {  ...  }                 N times
 *   on SELECTOR... {  ...  }           only on the ranks the selectors pick:
 *                                      rank=3  ranks=0-7,12  pp=0  pp!=0
 *                                      pp=last  tp=0-3 (several: all must hold)
 *   gemm|attn|elem|copy|conv|embedding ...   a device op, as `sim op` reads it
 *   coll op=allreduce|allgather|reducescatter|alltoall|broadcast|reduce|barrier|shift
 *        comm=NAME bytes=Q [algo=auto|NAME] [root=I]
 *   send peer=P bytes=Q [tag=T]        point-to-point; P is a rank number or
 *   recv peer=P bytes=Q [tag=T]        DIM+K / DIM-K (DIM: rank tp cp ep dp pp)
 *   delay time=Q [scale=dram|matrix ref=Q]
 *                                      host-side gap (dataloader, launch), or a
 *                                      kernel's measured time; with scale=, the
 *                                      time on a chip whose device-memory
 *                                      bandwidth (dram, ref= in B/s units) or
 *                                      fp16 matrix peak (matrix, ref= in
 *                                      FLOP/s units) is ref: another chip takes
 *                                      time x ref / its own (tr_delay_seconds)
 *   mark name=NAME                     starts a region of the report
 *   memory params=Q grads=Q optimizer=Q activations=Q kv=Q workspace=Q
 *                                      a rank's device memory by category (each
 *                                      optional; a later statement replaces
 *                                      the categories it names)
 *   workload name=N kind=train|infer model_flops=X tokens=X [decode_steps=N]
 *                                      top level, once, before the first op:
 *                                      what one step is, for tokens/s and MFU
 *
 * Every op line (device op, coll, send, recv, delay) also takes the
 * scheduling keys stream=NAME (default "0"; ops on one stream run in issue
 * order), id=LABEL (names the op) and after=L1,L2 (waits for the latest op
 * of this rank issued earlier with that label). after= never points forward,
 * so a rank's ops cannot wait on each other in a cycle.
 *
 * Built-in communicators: world, and one per layout dim (tp cp ep dp pp;
 * size 1 when the layout leaves the dim out). For collectives, bytes follows
 * nccl-tests: the per-rank buffer for allreduce/broadcast/reduce, the whole
 * output for allgather, the whole input for reducescatter, the per-rank send
 * buffer for alltoall.
 *
 * Errors are one line "path:line: message" and map to exit 65
 * (SIM_EXIT_TRACE); a file that cannot be read maps to 66.
 */
#ifndef SIM_TRACE_H
#define SIM_TRACE_H

#include "op.h"

#include <stddef.h>

#define TR_MAX_AFTER 8
#define TR_MAX_RANKS (1 << 20)
#define TR_MSG_MAX   512
#define TR_LINE_MAX  4096 /* longest line of a trace, in characters */

enum tr_kind { TK_OP, TK_COLL, TK_SEND, TK_RECV, TK_DELAY, TK_MARK, TK_MEM, TK_COUNT };
/* memory categories of a `memory` statement */
enum tr_mem { MEM_PARAMS, MEM_GRADS, MEM_OPTIMIZER, MEM_ACTIVATIONS, MEM_KV, MEM_WORKSPACE, MEM_COUNT };
enum tr_coll {
	CO_ALLREDUCE,
	CO_ALLGATHER,
	CO_REDUCESCATTER,
	CO_ALLTOALL,
	CO_BROADCAST,
	CO_REDUCE,
	CO_BARRIER,
	CO_SHIFT, /* each member sends bytes to the next member of its group (the last to the first): a ring step */
	CO_COUNT
};
/* algo= of a collective: "auto" (the replay picks), or the name of an
   algorithm the trace keeps as written (tr_algo_name): which names exist is
   the simulator's business (sim/cluster/coll.c checks them before a replay). */
#define TR_ALGO_AUTO (-1)
enum tr_dim { DIM_TP, DIM_CP, DIM_EP, DIM_DP, DIM_PP, DIM_COUNT };

/* One op as a rank issues it (after expansion). */
/* An all-to-all that is an MoE token dispatch or combine as DeepEP and
   HybridEP run it (coll topk= experts= groups= group_topk=): the send buffer
   holds each token topk times (one per chosen expert, as a plain all-to-all
   sends it); the experts are spread evenly over the group's members in rank
   order; a token picks topk of them uniformly (within group_topk of the
   groups expert groups when groups > 1: DeepSeek-V3's group-limited
   routing), and moves once to each member and once to each node that holds
   one of its experts (sim/cluster/coll/direct.c). topk 0: not routed. */
struct tr_route {
	int topk, experts, groups, group_topk;
};

struct tr_event {
	enum tr_kind kind;
	int line;   /* line of the statement in the trace file */
	int stream; /* stream index (tr_stream_name); 0 is the default stream "0" */
	int label;  /* id= label index (tr_label_name), -1 = none */
	int nafter;
	int after[TR_MAX_AFTER]; /* label indices this op waits for */
	struct op op;            /* TK_OP */
	enum tr_coll coll;       /* TK_COLL */
	int algo;                /* TK_COLL: TR_ALGO_AUTO, or index of the algo= name (tr_algo_name) */
	int comm;                /* TK_COLL: communicator index (tr_comm_name) */
	int root;                /* TK_COLL broadcast/reduce: index in the group, default 0 */
	struct tr_route route;   /* TK_COLL alltoall: an MoE dispatch's routing (all 0: a plain all-to-all) */
	double bytes;            /* TK_COLL, TK_SEND, TK_RECV */
	int peer;                /* TK_SEND, TK_RECV: absolute rank, resolved for this rank */
	long tag;                /* TK_SEND, TK_RECV: default 0 */
	double seconds;          /* TK_DELAY */
	int scale;               /* TK_DELAY: TR_SCALE_NONE, or what its time scales with on another chip */
	double scale_ref;        /* TK_DELAY with scale: the recording chip's figure (B/s or FLOP/s) */
	int mark;                /* TK_MARK: mark name index (tr_mark_name) */
	unsigned mem_set;        /* TK_MEM: bit c set when the statement names category c */
	double mem[MEM_COUNT];   /* TK_MEM: bytes per category (enum tr_mem) */
};

/* What a delay's time scales with on a chip other than the one it was
   measured on (delay scale=): nothing, device-memory bandwidth, or the
   fp16 dense matrix peak. */
enum { TR_SCALE_NONE, TR_SCALE_DRAM, TR_SCALE_MATRIX };
/* A delay's time on a chip of dram_Bps device-memory bandwidth and
   matrix_flops fp16 dense matrix peak: seconds x ref / the chip's figure
   for a scaled delay (the figure 0: unscaled), seconds otherwise. */
double tr_delay_seconds(const struct tr_event *ev, double dram_Bps, double matrix_flops);

/* The `workload` statement: what the step is, for throughput and MFU. */
enum tr_wkind { WK_TRAIN, WK_INFER };
struct tr_workload {
	char name[48];
	enum tr_wkind kind;
	double model_flops; /* FLOPs of the whole job per step, as the model counts them (0 = not given) */
	double tokens;      /* tokens per step (training: processed; inference: generated) */
	long decode_steps;  /* inference: decode steps in the trace (0 = none) */
	int line;
};

struct trace;
struct tr_cursor;

/* The largest trace file tr_load reads unless told otherwise (1 GiB: the
   GPT-3 step on 1024 ranks is 20 KiB; generated traces stay under a few MiB). */
#define TR_MAX_BYTES (1LL << 30)

/*
 * Reads and checks a trace file of at most max_bytes (0: TR_MAX_BYTES; a
 * larger file, or one with a NUL byte, is refused as soon as reading shows
 * it). Returns NULL on error with *exit_code set (65 bad trace, 66 cannot
 * read, 70 out of memory) and a one-line "path:line: message" in why.
 * Everything that can be checked without expanding for a rank is checked
 * here: syntax, keys, values and units, op lines (op_parse), communicator
 * and def names, after= labels that no earlier line defines, unclosed
 * blocks, layout product, selector values in range.
 */
struct trace *tr_load(const char *path, long long max_bytes, int *exit_code, char *why, size_t whylen);
/* The same from a string; name stands for the path in messages. */
struct trace *tr_parse_string(const char *text, const char *name, char *why, size_t whylen);
void tr_free(struct trace *t);

const char *tr_path(const struct trace *t);
/* The layout dims (bit per enum tr_dim, sizes above 1) along which every
   rank runs the same program: no `on` selector names the dim, no send/recv
   peer moves along it, and the trace has no rank= selector, absolute or
   rank+K peer, or `comm ranks=` group (any of which gives 0). Ranks that
   differ only in these dims issue the same ops at the same times when their
   transfers do not share links: the replay can run one of them for all. */
unsigned tr_symmetric_dims(const struct trace *t);
/* What may share a device's links, for the replay's shortcut past the
   engine: the stream every `coll` statement on communicator comm names
   (-1 when none does, -2 when they name several), and the dims send/recv
   peers move along (bit per enum tr_dim; -1 when some peer is a rank or
   rank+K, which could be anywhere). */
int tr_comm_stream(const struct trace *t, int comm);
int tr_p2p_dims(const struct trace *t);
/* The trace's workload statement, or NULL when it has none. */
const struct tr_workload *tr_workload(const struct trace *t);
/* The ops (device ops, collectives, sends, receives, delays, marks) rank
   expands to: repeats multiplied out, calls followed, `on` blocks as the
   rank's coordinates select them. Computed from the parsed tree in time
   linear in its size, before anything is expanded; may be +inf (a repeat
   bomb), and is +inf when there is no memory to count. */
double tr_ops_of_rank(const struct trace *t, int rank);
const char *tr_mem_name(enum tr_mem m); /* "params" ... */
int tr_ranks(const struct trace *t);
int tr_dim_size(const struct trace *t, enum tr_dim d); /* 1 when absent */
int tr_coord(const struct trace *t, int rank, enum tr_dim d);
const char *tr_dim_name(enum tr_dim d);
const char *tr_coll_name(enum tr_coll c); /* "allreduce" ... */
const char *tr_kind_name(enum tr_kind k); /* "op" "coll" "send" "recv" "delay" "mark" */

int tr_nstreams(const struct trace *t);
const char *tr_stream_name(const struct trace *t, int i);
int tr_nlabels(const struct trace *t);
const char *tr_label_name(const struct trace *t, int i);
int tr_nmarks(const struct trace *t);
const char *tr_mark_name(const struct trace *t, int i);
int tr_ncomms(const struct trace *t);
const char *tr_comm_name(const struct trace *t, int i);
int tr_comm_line(const struct trace *t, int i); /* 0 for built-ins */
/* algo= names other than "auto", as written, in order of first use; the
   line that first names each. tr_algo_name(t, TR_ALGO_AUTO) is "auto". */
int tr_nalgos(const struct trace *t);
const char *tr_algo_name(const struct trace *t, int i);
int tr_algo_line(const struct trace *t, int i);

/*
 * The group of communicator comm that rank belongs to: writes its members
 * in increasing rank order into members (up to max) and returns the group
 * size; returns 0 when rank is in no group of comm (a `comm ranks=` list
 * without it). *group_id (may be NULL) receives the lowest member rank,
 * which names the group (-1 when there is none). The size is the whole
 * group's even when max is smaller (members may be NULL with max 0).
 */
int tr_comm_group(const struct trace *t, int comm, int rank, int *members, int max, int *group_id);

/*
 * Lazy per-rank expansion: ops come out one at a time in issue order,
 * with def/call/repeat unrolled and `on` blocks filtered for this rank.
 * Memory is bounded by the nesting depth, not by the trace's length.
 */
struct tr_cursor *tr_cursor_new(const struct trace *t, int rank);
/*
 * Returns 1 and fills *ev, 0 at the end, -1 on an error only a rank's
 * expansion can find (peer=pp+1 on the last stage, a collective on a
 * `comm ranks=` group without this rank, after= a label this rank has not
 * issued yet): why gets "path:line: rank R: message".
 */
int tr_next(struct tr_cursor *c, struct tr_event *ev, char *why, size_t whylen);
void tr_cursor_free(struct tr_cursor *c);

/*
 * Iterations of `repeat`s, for a replay that derives a steady state instead
 * of playing every iteration (sim/cluster/replay_steady.c). After
 * tr_cursor_stops(c, 1), tr_next also returns TR_LOOP before the first event
 * of each iteration of a repeat (the first included; before anything of it
 * has been expanded) and TR_LOOP_END when a repeat is left; tr_cursor_loop
 * says which. Calling tr_next again goes on. A repeat whose iteration issues
 * nothing for the rank ends after it (every iteration would be as empty).
 */
#define TR_LOOP     2
#define TR_LOOP_END 3
struct tr_loop {
	int line;        /* the repeat statement's line */
	int body;        /* its body (a block of the parsed trace): names the statement */
	int depth;       /* blocks it is in, calls and `on` blocks included (1: a repeat at the top level) */
	long long count; /* iterations in all */
	long long iter;  /* TR_LOOP: the iteration about to start (0 = the first); TR_LOOP_END: count */
};
void tr_cursor_stops(struct tr_cursor *c, int on);
const struct tr_loop *tr_cursor_loop(const struct tr_cursor *c);
/* The repeat of rank's program that issues the most ops, iterations
   multiplied out, among those no other repeat holds (the first of equals):
   its line, body, depth and count as a TR_LOOP stop at its first iteration
   describes it. Returns 1, or 0 when the rank has no such repeat (or no
   memory to look). The replay's steady state of a pipeline watches it on
   every rank (sim/cluster/replay_steady.c). */
int tr_largest_repeat(const struct trace *t, int rank, struct tr_loop *out);
/* Right after a TR_LOOP stop: skips n of the iterations left (the one
   about to start included), so that iteration iter + n follows at once
   (without a stop of its own), or the repeat ends when n is all that is
   left. Returns 0, or -1 when the cursor
   is not at such a stop or fewer iterations are left. */
int tr_cursor_skip(struct tr_cursor *c, long long n);

/* Canonical one-line text of an event (for reports and timelines): the
   op_format text of a device op, or the coll/send/recv/delay/mark line with
   defaults filled in and peer= as the resolved rank, then stream= (when not
   "0"), id= and after=. It reads back as a trace line to the same event.
   snprintf-like: returns the length of the whole text. */
size_t tr_event_format(const struct trace *t, const struct tr_event *ev, char *buf, size_t len);

#endif
