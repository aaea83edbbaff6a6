/*
 * test_op.c -- the op vocabulary: good lines and their canonical text, round
 * trips through op_format, FLOP counts, and the refusals with their messages.
 */
#include "arch.h"
#include "op.h"

#include <stdio.h>
#include <string.h>

static int fails, checks;

/* A line that parses, with its canonical text. */
static const struct {
	const char *line, *canon;
} good[] = {
    {"gemm m=4096 n=4096 k=4096 dtype=fp16",
     "gemm m=4096 n=4096 k=4096 batch=1 dtype=fp16 acc=fp32 trans=nn epilogue=none warm=0"},
    {"  gemm\tk=64 m=1 n=2 dtype=int8 batch=3 trans=tt epilogue=bias_gelu warm=1  \n",
     "gemm m=1 n=2 k=64 batch=3 dtype=int8 acc=int32 trans=tt epilogue=bias_gelu warm=1"},
    {"gemm m=8 n=8 k=8 dtype=fp64", "gemm m=8 n=8 k=8 batch=1 dtype=fp64 acc=fp64 trans=nn epilogue=none warm=0"},
    {"gemm m=8 n=8 k=8 dtype=fp32", "gemm m=8 n=8 k=8 batch=1 dtype=fp32 acc=fp32 trans=nn epilogue=none warm=0"},
    {"gemm m=8 n=8 k=8 dtype=tf32", "gemm m=8 n=8 k=8 batch=1 dtype=tf32 acc=fp32 trans=nn epilogue=none warm=0"},
    {"gemm m=8 n=8 k=8 dtype=fp8 trans=nt",
     "gemm m=8 n=8 k=8 batch=1 dtype=fp8 acc=fp32 trans=nt epilogue=none warm=0"},
    {"gemm m=8 n=8 k=8 dtype=fp4", "gemm m=8 n=8 k=8 batch=1 dtype=fp4 acc=fp32 trans=nn epilogue=none warm=0"},
    {"gemm m=8 n=8 k=8 dtype=int4", "gemm m=8 n=8 k=8 batch=1 dtype=int4 acc=int32 trans=nn epilogue=none warm=0"},
    {"gemm m=8 n=8 k=8 dtype=fp16 acc=fp16 epilogue=relu",
     "gemm m=8 n=8 k=8 batch=1 dtype=fp16 acc=fp16 trans=nn epilogue=relu warm=0"},
    {"gemm m=007 n=8 k=8 dtype=bf16", "gemm m=7 n=8 k=8 batch=1 dtype=bf16 acc=fp32 trans=nn epilogue=none warm=0"},
    /* launch= on any kind, printed only where it is a graph's */
    {"gemm m=1 n=8 k=8 dtype=bf16 launch=graph",
     "gemm m=1 n=8 k=8 batch=1 dtype=bf16 acc=fp32 trans=nn epilogue=none warm=0 launch=graph"},
    {"gemm m=1 n=8 k=8 dtype=bf16 launch=eager",
     "gemm m=1 n=8 k=8 batch=1 dtype=bf16 acc=fp32 trans=nn epilogue=none warm=0"},
    {"copy launch=graph bytes=64", "copy bytes=64 src=hbm dst=hbm launch=graph"},
    {"attn b=8 h=32 hkv=8 sq=2048 skv=2048 d=128 causal=1 dtype=bf16 impl=flash2 dir=bwd",
     "attn b=8 h=32 hkv=8 sq=2048 skv=2048 d=128 causal=1 dtype=bf16 impl=flash2 dir=bwd warm=0"},
    {"attn b=1 h=16 sq=512 skv=512 d=64 dtype=fp16 impl=naive",
     "attn b=1 h=16 hkv=16 sq=512 skv=512 d=64 causal=0 dtype=fp16 impl=naive dir=fwd warm=0"},
    {"attn b=64 h=32 hkv=8 sq=1 skv=4096 d=128 dtype=fp16 impl=paged page=32",
     "attn b=64 h=32 hkv=8 sq=1 skv=4096 d=128 causal=0 dtype=fp16 impl=paged page=32 dir=fwd warm=0"},
    {"attn b=64 h=32 sq=1 skv=4096 d=128 dtype=fp16 impl=paged",
     "attn b=64 h=32 hkv=32 sq=1 skv=4096 d=128 causal=0 dtype=fp16 impl=paged page=16 dir=fwd warm=0"},
    {"attn b=4 h=8 sq=16 skv=100 d=128 dtype=fp8 impl=decode causal=1 warm=1",
     "attn b=4 h=8 hkv=8 sq=16 skv=100 d=128 causal=1 dtype=fp8 impl=decode dir=fwd warm=1"},
    {"attn b=2 h=64 hkv=8 sq=4096 skv=4096 d=64 causal=1 dtype=bf16 impl=flash2 window=128 dir=bwd",
     "attn b=2 h=64 hkv=8 sq=4096 skv=4096 d=64 causal=1 dtype=bf16 impl=flash2 window=128 dir=bwd warm=0"},
    {"attn b=64 h=32 hkv=8 sq=1 skv=2048 d=128 dtype=fp16 impl=paged maxkv=8192",
     "attn b=64 h=32 hkv=8 sq=1 skv=2048 d=128 causal=0 dtype=fp16 impl=paged page=16 maxkv=8192 dir=fwd warm=0"},
    {"attn b=64 h=32 hkv=8 sq=1 skv=2048 d=128 dtype=fp16 impl=paged maxkv=2048",
     "attn b=64 h=32 hkv=8 sq=1 skv=2048 d=128 causal=0 dtype=fp16 impl=paged page=16 dir=fwd warm=0"},
    {"attn b=2 h=8 sq=1 skv=4096 d=64 causal=1 dtype=bf16 impl=paged window=128",
     "attn b=2 h=8 hkv=8 sq=1 skv=4096 d=64 causal=1 dtype=bf16 impl=paged page=16 window=128 dir=fwd warm=0"},
    {"attn b=1 h=1 sq=1 skv=1 d=1 dtype=fp16 impl=flash3",
     "attn b=1 h=1 hkv=1 sq=1 skv=1 d=1 causal=0 dtype=fp16 impl=flash3 dir=fwd warm=0"},
    {"attn b=8 h=12 sq=2048 skv=2048 d=64 causal=1 dtype=bf16 impl=flash1 dir=bwd dropout=.1",
     "attn b=8 h=12 hkv=12 sq=2048 skv=2048 d=64 causal=1 dtype=bf16 impl=flash1 dropout=0.1 dir=bwd warm=0"},
    {"attn b=8 h=12 sq=2048 skv=2048 d=64 dtype=bf16 impl=flash2 dropout=1e-1",
     "attn b=8 h=12 hkv=12 sq=2048 skv=2048 d=64 causal=0 dtype=bf16 impl=flash2 dropout=0.1 dir=fwd warm=0"},
    {"attn b=8 h=12 sq=2048 skv=2048 d=64 dtype=bf16 impl=flash2 dropout=0",
     "attn b=8 h=12 hkv=12 sq=2048 skv=2048 d=64 causal=0 dtype=bf16 impl=flash2 dir=fwd warm=0"},
    {"elem op=layernorm n=67108864 cols=4096 dtype=fp16", "elem op=layernorm n=67108864 cols=4096 dtype=fp16 warm=0"},
    {"elem op=softmax n=100 dtype=fp32", "elem op=softmax n=100 cols=100 dtype=fp32 warm=0"},
    {"elem op=add n=1000 dtype=fp16 warm=1", "elem op=add n=1000 dtype=fp16 warm=1"},
    {"elem op=mul n=8 dtype=bf16 strided=1", "elem op=mul n=8 dtype=bf16 warm=0 strided=1"},
    {"elem op=permute n=8 dtype=bf16 strided=1", "elem op=permute n=8 dtype=bf16 warm=0"},
    {"elem op=cast n=10 dtype=fp16", "elem op=cast n=10 dtype=fp16 to=fp32 warm=0"},
    {"elem op=cast n=10 dtype=fp32 to=fp8", "elem op=cast n=10 dtype=fp32 to=fp8 warm=0"},
    {"elem op=triad n=1 dtype=fp64", "elem op=triad n=1 dtype=fp64 warm=0"},
    {"elem op=fill n=4 dtype=int8", "elem op=fill n=4 dtype=int8 warm=0"},
    {"elem op=layernorm_bwd n=8 cols=4 dtype=bf16 split=1",
     "elem op=layernorm_bwd n=8 cols=4 dtype=bf16 warm=0 split=1"},
    {"elem op=rmsnorm_bwd n=8 dtype=bf16", "elem op=rmsnorm_bwd n=8 cols=8 dtype=bf16 warm=0"},
    {"elem op=softmax_bwd n=8 cols=2 dtype=fp32", "elem op=softmax_bwd n=8 cols=2 dtype=fp32 warm=0"},
    {"copy bytes=1GiB", "copy bytes=1073741824 src=hbm dst=hbm"},
    {"copy bytes=4096 src=host", "copy bytes=4096 src=host dst=hbm"},
    {"copy dst=host bytes=1.5KB src=hbm", "copy bytes=1500 src=hbm dst=host"},
    {"copy bytes=1e9", "copy bytes=1000000000 src=hbm dst=hbm"},
    {"conv n=32 c=64 h=56 w=56 k=64 r=3 s=3 stride=1 pad=1 dtype=fp16",
     "conv n=32 c=64 h=56 w=56 k=64 r=3 s=3 stride=1 pad=1 dtype=fp16 acc=fp32 warm=0"},
    {"conv n=1 c=3 h=224 w=224 k=64 r=7 s=7 stride=2 pad=3 dtype=int8",
     "conv n=1 c=3 h=224 w=224 k=64 r=7 s=7 stride=2 pad=3 dtype=int8 acc=int32 warm=0"},
    {"conv n=1 c=1 h=1 w=1 k=1 r=1 s=1 dtype=fp32",
     "conv n=1 c=1 h=1 w=1 k=1 r=1 s=1 stride=1 pad=0 dtype=fp32 acc=fp32 warm=0"},
    /* the backward passes, and the units a kernel runs on: in the text only where given */
    {"conv n=1 c=8 h=4 w=4 k=8 r=3 s=3 dtype=bf16 dir=fwd",
     "conv n=1 c=8 h=4 w=4 k=8 r=3 s=3 stride=1 pad=0 dtype=bf16 acc=fp32 warm=0"},
    {"conv dir=wgrad n=1 c=8 h=4 w=4 k=8 r=3 s=3 dtype=bf16 busy=16",
     "conv n=1 c=8 h=4 w=4 k=8 r=3 s=3 stride=1 pad=0 dtype=bf16 acc=fp32 warm=0 dir=wgrad busy=16"},
    {"conv n=1 c=8 h=4 w=4 k=8 r=3 s=3 dtype=bf16 dir=bwd units=100",
     "conv n=1 c=8 h=4 w=4 k=8 r=3 s=3 stride=1 pad=0 dtype=bf16 acc=fp32 warm=0 dir=bwd units=100"},
    {"gemm m=8 n=8 k=8 dtype=bf16 units=116",
     "gemm m=8 n=8 k=8 batch=1 dtype=bf16 acc=fp32 trans=nn epilogue=none warm=0 units=116"},
    {"gemm m=8 n=8 k=8 margin=16 dtype=bf16",
     "gemm m=8 n=8 k=8 batch=1 dtype=bf16 acc=fp32 trans=nn epilogue=none warm=0 margin=16"},
    {"gemm busy=8 m=8 n=8 k=8 dtype=bf16",
     "gemm m=8 n=8 k=8 batch=1 dtype=bf16 acc=fp32 trans=nn epilogue=none warm=0 busy=8"},
    /* a kernel's tile (tile=MxN), written last */
    {"gemm tile=64x128 m=128 n=1536 k=2048 batch=16 dtype=bf16 trans=nt",
     "gemm m=128 n=1536 k=2048 batch=16 dtype=bf16 acc=fp32 trans=nt epilogue=none warm=0 tile=64x128"},
    {"gemm m=8 n=8 k=8 dtype=bf16 units=66 tile=1024x8",
     "gemm m=8 n=8 k=8 batch=1 dtype=bf16 acc=fp32 trans=nn epilogue=none warm=0 units=66 tile=1024x8"},
    {"embedding tokens=16384 dim=12288 vocab=50257 dtype=fp16",
     "embedding tokens=16384 dim=12288 vocab=50257 dtype=fp16 warm=0"},
    /* 2^62 - 1, the largest size */
    {"gemm m=4611686018427387903 n=1 k=1 dtype=fp16",
     "gemm m=4611686018427387903 n=1 k=1 batch=1 dtype=fp16 acc=fp32 trans=nn epilogue=none warm=0"},
    {"gemm m=3333333333333333333 n=1 k=1 batch=1 dtype=fp16",
     "gemm m=3333333333333333333 n=1 k=1 batch=1 dtype=fp16 acc=fp32 trans=nn epilogue=none warm=0"},
    /* just below the limit: 2^31 * 2^30 = 2^61 */
    {"gemm m=2147483648 n=1073741824 k=1 dtype=fp16",
     "gemm m=2147483648 n=1073741824 k=1 batch=1 dtype=fp16 acc=fp32 trans=nn epilogue=none warm=0"},
};

/* A line that is refused, with a part of its message. */
static const struct {
	const char *line, *msg;
} bad[] = {
    {"", "op: empty line"},
    {"   \t ", "op: empty line"},
    {"gem m=1 n=1 k=1 dtype=fp16", "unknown op kind 'gem' (expected gemm|attn|elem|copy|conv|embedding)"},
    {"GEMM m=1 n=1 k=1 dtype=fp16", "unknown op kind 'GEMM'"},
    {"gemm mm=1 n=1 k=1 dtype=fp16", "gemm: unknown key 'mm' (expected m, n, k, batch, dtype, acc, trans, epilogue, "
                                     "warm, units, margin, busy, tile, promote, grouped, launch)"},
    {"gemm m=1 n=1 k=1 k=2 dtype=fp16", "gemm: k= given twice"},
    {"gemm m=1 n=1 dtype=fp16", "gemm: missing k="},
    {"gemm m=1 n=1 k=1", "gemm: missing dtype="},
    {"gemm m=0 n=1 k=1 dtype=fp16", "gemm: m=0 must be a positive integer"},
    {"gemm m=-4 n=1 k=1 dtype=fp16", "gemm: m=-4 must be a positive integer"},
    {"gemm m=+4 n=1 k=1 dtype=fp16", "gemm: m=+4 must be a positive integer"},
    {"gemm m=4.5 n=1 k=1 dtype=fp16", "gemm: m=4.5 must be a positive integer"},
    {"gemm m=1e3 n=1 k=1 dtype=fp16", "gemm: m=1e3 must be a positive integer"},
    {"gemm m=4K n=1 k=1 dtype=fp16", "gemm: m=4K must be a positive integer"},
    {"gemm m=99999999999999999999999 n=1 k=1 dtype=fp16", "gemm: m=99999999999999999999999 is too large"},
    {"gemm m=4611686018427387904 n=1 k=1 dtype=fp16", "is too large (must be below 2^62)"},
    {"gemm m=9999999999999999999 n=1 k=1 dtype=fp16", "gemm: m=9999999999999999999 is too large"},
    {"gemm m=33333333333333333333 n=1 k=1 dtype=fp16", "gemm: m=33333333333333333333 is too large"},
    {"gemm m=2 n=1 k=1 batch=4611686018427387903 dtype=fp16", "gemm: sizes overflow"},
    {"gemm m=2147483648 n=2147483648 k=1 dtype=fp16", "gemm: sizes overflow (m*n*k*batch > 2^62)"},
    {"gemm m=65536 n=65536 k=65536 batch=65536 dtype=fp16", "gemm: sizes overflow"},
    {"gemm m n=1 k=1 dtype=fp16", "gemm: 'm' is not key=value"},
    {"gemm m= n=1 k=1 dtype=fp16", "gemm: m= has no value"},
    {"gemm =5 m=1 n=1 k=1 dtype=fp16", "gemm: '=5' has no key"},
    {"gemm m=1 n=1 k=1 dtype=fp12",
     "gemm: unknown dtype 'fp12' (expected fp64|fp32|tf32|fp16|bf16|fp8|fp4|int8|int4|int32)"},
    {"gemm m=1 n=1 k=1 dtype=fp16 acc=fp7", "gemm: unknown dtype 'fp7' in acc="},
    {"gemm m=1 n=1 k=1 dtype=fp16 acc=int32", "gemm: acc=int32 does not suit dtype=fp16"},
    {"gemm m=1 n=1 k=1 dtype=int8 acc=fp32", "gemm: acc=fp32 does not suit dtype=int8"},
    {"gemm m=1 n=1 k=1 dtype=fp16 trans=xx", "gemm: trans=xx is not one of nn|nt|tn|tt"},
    {"gemm m=1 n=1 k=1 dtype=fp16 epilogue=tanh",
     "gemm: epilogue=tanh is not one of none|bias|gelu|relu|bias_gelu|bias_relu"},
    {"gemm m=1 n=1 k=1 dtype=fp16 warm=2", "gemm: warm=2 must be 0 or 1"},
    {"gemm m=1 n=1 k=1 dtype=fp16 warm=yes", "gemm: warm=yes must be 0 or 1"},
    {"gemm m=1 n=1 k=1 dtype=fp16 stream=1", "gemm: unknown key 'stream'"},
    {"attn b=1 h=32 hkv=5 sq=8 skv=8 d=64 dtype=fp16 impl=flash2", "attn: hkv=5 must divide h=32"},
    {"attn b=1 h=32 hkv=64 sq=8 skv=8 d=64 dtype=fp16 impl=flash2", "attn: hkv=64 must divide h=32"},
    {"attn b=1 h=32 sq=8 skv=8 d=64 dtype=fp16", "attn: missing impl="},
    {"attn b=1 h=32 sq=8 skv=8 d=64 dtype=fp16 impl=flash9",
     "attn: impl=flash9 is not one of flash2|flash3|naive|decode|paged"},
    {"attn b=1 h=32 sq=17 skv=8 d=64 dtype=fp16 impl=decode", "attn: impl=decode needs sq between 1 and 16, not sq=17"},
    {"attn b=1 h=32 sq=32 skv=8 d=64 dtype=fp16 impl=paged", "one query (up to 16 speculative) per sequence"},
    {"attn b=1 h=32 sq=1 skv=8 d=64 dtype=fp16 impl=decode dir=bwd", "attn: dir=bwd is not available with impl=decode"},
    {"attn b=1 h=32 hkv=8 sq=17 skv=8 d=64 dtype=fp16 impl=flash2_decode",
     "attn: impl=flash2_decode needs sq between 1 and 16, not sq=17"},
    {"attn b=1 h=32 sq=1 skv=8 d=64 dtype=fp16 impl=flash2_decode dir=bwd",
     "attn: dir=bwd is not available with impl=flash2_decode"},
    {"attn b=1 h=32 hkv=8 sq=17 skv=8 d=64 dtype=fp16 impl=mmha",
     "attn: impl=mmha needs sq between 1 and 16, not sq=17"},
    {"attn b=1 h=32 sq=1 skv=8 d=64 dtype=fp16 impl=mmha dir=bwd", "attn: dir=bwd is not available with impl=mmha"},
    {"attn b=1 h=32 sq=1 skv=8 d=64 dtype=fp16 impl=mmha page=64",
     "attn: page= applies only to impl=paged (not impl=mmha)"},
    {"attn b=1 h=32 sq=1 skv=8 d=64 dtype=fp16 impl=flash2 page=16", "attn: page= applies only to impl=paged"},
    {"attn b=1 h=32 sq=1 skv=8 d=64 dtype=fp16 impl=decode maxkv=8192",
     "attn: maxkv= applies only to impl=paged and impl=flash2_decode (not impl=decode)"},
    {"attn b=1 h=32 sq=1 skv=4096 d=64 dtype=fp16 impl=paged maxkv=2048",
     "attn: maxkv=2048 is below skv=4096 (the longest context the kernel is launched for bounds every"},
    {"attn b=1 h=32 sq=1 skv=8 d=64 dtype=fp16 impl=flash2 dir=up", "attn: dir=up is not one of fwd|bwd"},
    {"attn b=1 h=32 sq=1 skv=8 d=64 dtype=fp16 impl=flash2 causal=true", "attn: causal=true must be 0 or 1"},
    {"attn b=1048576 h=1024 sq=1048576 skv=1048576 d=128 dtype=fp16 impl=flash2",
     "attn: sizes overflow (b*h*sq*skv*d > 2^62)"},
    {"attn b=1 h=1 sq=1 skv=1 d=1 dtype=fp16 impl=flash2 m=4",
     "attn: unknown key 'm' (expected b, h, hkv, sq, skv, d, causal, dtype, impl, dir, page, maxkv, dropout, window, "
     "warm, "
     "launch)"},
    {"attn b=1 h=1 sq=8 skv=8 d=64 dtype=bf16 impl=flash2 window=4",
     "attn: window=4 needs causal=1 (a sliding window over the keys up to each query)"},
    {"attn b=1 h=1 sq=8 skv=8 d=64 causal=1 dtype=bf16 impl=flash2 window=0",
     "attn: window=0 must be a positive integer"},
    {"attn b=1 h=32 sq=8 skv=8 d=64 dtype=fp16 impl=flash2 dropout=1",
     "attn: dropout=1 must be a probability from 0 up to (not including) 1, such as 0.1"},
    {"attn b=1 h=32 sq=8 skv=8 d=64 dtype=fp16 impl=flash2 dropout=0.1x", "attn: dropout=0.1x must be a probability"},
    {"attn b=1 h=32 sq=8 skv=8 d=64 dtype=fp16 impl=flash2 dropout=nan", "attn: dropout=nan must be a probability"},
    {"attn b=1 h=32 sq=8 skv=8 d=64 dtype=fp16 impl=flash2 dropout=", "attn: dropout= has no value"},
    {"attn b=1 h=32 sq=8 skv=8 d=64 dtype=fp16 impl=naive dropout=0.1",
     "attn: dropout= applies to the training kernels impl=flash1 and impl=flash2 (impl=naive: its dropout is an "
     "elementwise pass of its own, an elem op)"},
    {"attn b=1 h=32 sq=8 skv=8 d=64 dtype=fp16 impl=flash3 dropout=0.1",
     "(impl=flash3: FlashAttention-3 has no dropout)"},
    {"attn b=1 h=32 sq=1 skv=8 d=64 dtype=fp16 impl=decode dropout=0.1", "(impl=decode: inference has no dropout)"},
    {"elem op=add n=10 cols=5 dtype=fp16", "elem: cols= applies only to the row ops layernorm|rmsnorm|softmax"},
    {"elem op=softmax_bwd n=10 cols=5 dtype=fp16 split=1", "elem: split= applies only to op=layernorm_bwd"},
    {"elem op=layernorm_bwd n=10 cols=5 dtype=fp16 strided=1", "elem: strided= applies to the pointwise ops"},
    {"elem op=softmax n=10 cols=3 dtype=fp16", "elem: cols=3 must divide n=10"},
    {"elem op=softmax n=10 cols=20 dtype=fp16", "elem: cols=20 must divide n=10"},
    {"elem op=gelu n=10 dtype=fp16 to=fp32", "elem: to= applies only to op=cast"},
    {"elem op=rmsnorm n=10 dtype=fp16 strided=1", "elem: strided= applies to the pointwise ops of a framework"},
    {"elem op=cast n=10 dtype=fp16 to=fp3", "elem: unknown dtype 'fp3' in to="},
    {"elem op=tanh n=10 dtype=fp16", "elem: op=tanh is not one of add|mul|gelu"},
    {"elem n=10 dtype=fp16", "elem: missing op="},
    {"elem op=add n=10", "elem: missing dtype="},
    {"copy bytes=0", "copy: bytes=0 must be positive"},
    {"copy bytes=-5GB", "copy: bytes=-5GB must be positive"},
    {"copy bytes=0.5", "copy: bytes=0.5 is not a whole number of bytes"},
    {"copy bytes=5GHz", "copy: bytes=5GHz: "},
    {"copy bytes=lots", "copy: bytes=lots: "},
    {"copy bytes=1e300B", "copy: bytes=1e300B is too large"},
    {"copy bytes=1GB dtype=fp16", "copy: unknown key 'dtype' (expected bytes, src, dst, launch)"},
    {"elem op=add n=8 dtype=bf16 launch=graph launch=eager", "elem: launch= given twice"},
    {"elem op=add n=8 dtype=bf16 launch=", "elem: launch= has no value"},
    {"elem op=add n=8 dtype=bf16 launch=cuda", "elem: launch=cuda is not one of eager|graph"},
    {"copy bytes=1GB src=disk", "copy: src=disk is not one of hbm|host"},
    {"copy src=hbm", "copy: missing bytes="},
    {"conv n=1 c=3 h=4 w=4 k=8 r=5 s=3 dtype=fp16", "conv: filter r=5 is larger than the padded input (h+2*pad=4)"},
    {"conv n=1 c=3 h=8 w=2 k=8 r=5 s=3 pad=0 dtype=fp16",
     "conv: filter s=3 is larger than the padded input (w+2*pad=2)"},
    {"conv n=1 c=3 h=4 w=4 k=8 r=3 s=3 pad=-1 dtype=fp16", "conv: pad=-1 must be a non-negative integer"},
    {"conv n=1 c=3 h=4 w=4 k=8 r=3 s=3 stride=0 dtype=fp16", "conv: stride=0 must be a positive integer"},
    {"conv n=1 c=3 h=4 w=4 k=8 r=3 s=3 pad=4611686018427387903 dtype=fp16", "conv: sizes overflow (h+2*pad"},
    {"conv n=1048576 c=1048576 h=1048576 w=1048576 k=1 r=1 s=1 dtype=fp16", "conv: sizes overflow (n*c*h*w > 2^62)"},
    {"conv n=1 c=3 h=4 w=4 k=8 r=3 dtype=fp16", "conv: missing s="},
    {"conv n=1 c=3 h=4 w=4 k=8 r=3 s=3 dtype=fp16 dir=back", "conv: dir=back is not one of fwd|bwd|dgrad|wgrad"},
    {"conv n=1 c=3 h=4 w=4 k=8 r=3 s=3 dtype=fp16 units=4 busy=2", "conv: more than one of units=, margin= and busy="},
    {"gemm m=1 n=1 k=1 dtype=fp16 units=0", "gemm: units=0 must be a positive integer"},
    {"gemm m=1 n=1 k=1 dtype=fp16 busy=1 units=1", "gemm: more than one of units=, margin= and busy="},
    {"gemm m=1 n=1 k=1 dtype=fp16 tile=64x100", "gemm: tile=64x100 must be MxN, M and N multiples of 8 from 8 to 1024"},
    {"gemm m=1 n=1 k=1 dtype=fp16 tile=0x128", "gemm: tile=0x128 must be MxN"},
    {"gemm m=1 n=1 k=1 dtype=fp16 tile=2048x128", "gemm: tile=2048x128 must be MxN"},
    {"gemm m=1 n=1 k=1 dtype=fp16 tile=128", "gemm: tile=128 must be MxN"},
    {"gemm m=1 n=1 k=1 dtype=fp16 tile=128x", "gemm: tile=128x must be MxN"},
    {"gemm m=1 n=1 k=1 dtype=fp16 tile=x128", "gemm: tile=x128 must be MxN"},
    {"gemm m=1 n=1 k=1 dtype=fp16 tile=128x128x64", "gemm: tile=128x128x64 must be MxN"},
    {"conv n=1 c=3 h=4 w=4 k=8 r=3 s=3 dtype=fp16 tile=64x128", "conv: unknown key 'tile'"},
    {"attn b=1 h=1 sq=1 skv=1 d=64 dtype=fp16 impl=flash2 dir=wgrad", "attn: dir=wgrad is not one of fwd|bwd"},
    {"embedding tokens=1 dim=8 dtype=fp16", "embedding: missing vocab="},
    {"embedding tokens=4611686018427387 dim=4096 vocab=10 dtype=fp16", "embedding: sizes overflow (tokens*dim > 2^62)"},
    {"embedding tokens=1 dim=4096 vocab=4611686018427387 dtype=fp16", "embedding: sizes overflow (vocab*dim > 2^62)"},
    {"gemm m=1 n=1 k=1 dtype=fp16 \x01\x02=3", "gemm: unknown key '\?\?'"},
    {"gemm m=1 n=1 k=1 dtype=fp16 aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa=1",
     "unknown key 'aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa...'"},
};

/* FLOPs of a line. */
static const struct {
	const char *line;
	double flops;
} work[] = {
    {"gemm m=4096 n=4096 k=4096 dtype=fp16", 2.0 * 4096 * 4096 * 4096},
    {"gemm m=4096 n=4096 k=4096 dtype=fp16 batch=3 epilogue=bias_gelu", 3 * 2.0 * 4096 * 4096 * 4096},
    {"attn b=2 h=3 sq=4 skv=4 d=5 dtype=fp16 impl=flash2", 4.0 * 5 * 2 * 3 * 16},
    {"attn b=2 h=3 sq=4 skv=4 d=5 causal=1 dtype=fp16 impl=flash2", 4.0 * 5 * 2 * 3 * 10},
    {"attn b=2 h=3 sq=4 skv=4 d=5 causal=1 dtype=fp16 impl=flash2 dir=bwd", 2.5 * 4.0 * 5 * 2 * 3 * 10},
    /* queries aligned to the end of the keys: rows see 7, 8, 9, 10 keys */
    {"attn b=1 h=1 sq=4 skv=10 d=1 causal=1 dtype=fp16 impl=flash2", 4.0 * 34},
    /* more queries than keys: the first two see none, then 1, 2, 3 */
    {"attn b=1 h=1 sq=5 skv=3 d=1 causal=1 dtype=fp16 impl=flash2", 4.0 * 6},
    {"attn b=8 h=32 hkv=8 sq=1 skv=4096 d=128 dtype=fp16 impl=decode", 4.0 * 8 * 32 * 4096 * 128},
    /* a window of 3: rows see 1, 2, 3, 3, 3, 3, 3, 3 keys */
    {"attn b=1 h=1 sq=8 skv=8 d=1 causal=1 dtype=fp16 impl=flash2 window=3", 4.0 * 21},
    /* aligned to the end of 10 keys, a window of 8: rows see 7, 8, 8, 8 */
    {"attn b=1 h=1 sq=4 skv=10 d=1 causal=1 dtype=fp16 impl=flash2 window=8", 4.0 * 31},
    /* a window as long as the keys changes nothing */
    {"attn b=1 h=1 sq=4 skv=10 d=1 causal=1 dtype=fp16 impl=flash2 window=10", 4.0 * 34},
    /* one query of a decode step sees its window */
    {"attn b=2 h=4 sq=1 skv=4096 d=8 causal=1 dtype=fp16 impl=paged window=128", 4.0 * 2 * 4 * 8 * 128},
    {"attn b=1 h=1 sq=2 skv=100 d=1 causal=1 dtype=fp16 impl=paged", 4.0 * (99 + 100)},
    {"elem op=add n=1000 dtype=fp16", 1000},
    {"elem op=gelu n=1000 dtype=fp16", 8000},
    {"elem op=layernorm n=1000 cols=100 dtype=fp16", 8000},
    {"elem op=adam n=10 dtype=fp32", 120},
    {"elem op=cast n=10 dtype=fp32", 0},
    {"elem op=copy n=10 dtype=fp32", 0},
    {"elem op=fill n=10 dtype=fp32", 0},
    {"elem op=layernorm_bwd n=1000 cols=100 dtype=fp16", 10000},
    {"elem op=softmax_bwd n=1000 cols=100 dtype=fp16", 3000},
    {"elem op=triad n=10 dtype=fp32", 20},
    {"copy bytes=1GiB", 0},
    {"embedding tokens=16384 dim=12288 vocab=50257 dtype=fp16", 0},
    /* implicit GEMM: M = n*p*q = 32*56*56, N = k = 64, K = c*r*s = 64*9 */
    {"conv n=32 c=64 h=56 w=56 k=64 r=3 s=3 pad=1 dtype=fp16", 2.0 * 32 * 56 * 56 * 64 * 64 * 9},
    /* 224 + 6 - 7 = 223, /2 = 111, +1 = 112 */
    {"conv n=1 c=3 h=224 w=224 k=64 r=7 s=7 stride=2 pad=3 dtype=fp16", 2.0 * 112 * 112 * 64 * 3 * 49},
    /* each backward pass does the forward's MACs; dir=bwd is both */
    {"conv n=1 c=3 h=224 w=224 k=64 r=7 s=7 stride=2 pad=3 dtype=fp16 dir=dgrad", 2.0 * 112 * 112 * 64 * 3 * 49},
    {"conv n=1 c=3 h=224 w=224 k=64 r=7 s=7 stride=2 pad=3 dtype=fp16 dir=wgrad", 2.0 * 112 * 112 * 64 * 3 * 49},
    {"conv n=1 c=3 h=224 w=224 k=64 r=7 s=7 stride=2 pad=3 dtype=fp16 dir=bwd", 4.0 * 112 * 112 * 64 * 3 * 49},
    {"gemm m=2 n=3 k=5 dtype=fp16 units=7", 60},
};

static const char *const extra[] = {"stream", "after", NULL};

static void check_good(const char *line, const char *canon)
{
	struct op a, b;
	char why[256] = "", t1[OP_TEXT_MAX], t2[OP_TEXT_MAX];
	checks++;
	if (op_parse(line, NULL, &a, why, sizeof why)) {
		printf("FAIL '%s' refused: %s\n", line, why);
		fails++;
		return;
	}
	op_format(&a, t1, sizeof t1);
	if (strcmp(t1, canon)) {
		printf("FAIL '%s'\n  canonical '%s'\n  want      '%s'\n", line, t1, canon);
		fails++;
	}
	if (op_parse(t1, NULL, &b, why, sizeof why)) {
		printf("FAIL round trip of '%s' refused: %s\n", t1, why);
		fails++;
		return;
	}
	op_format(&b, t2, sizeof t2);
	if (strcmp(t1, t2) || memcmp(&a, &b, sizeof a)) {
		printf("FAIL round trip '%s' -> '%s'\n", t1, t2);
		fails++;
	}
}

static void check_bad(const char *line, const char *msg)
{
	struct op o;
	char why[256] = "";
	checks++;
	if (!op_parse(line, NULL, &o, why, sizeof why)) {
		printf("FAIL '%s' accepted (want '%s')\n", line, msg);
		fails++;
		return;
	}
	if (!strstr(why, msg) || strchr(why, '\n')) {
		printf("FAIL '%s'\n  message '%s'\n  want    '%s'\n", line, why, msg);
		fails++;
	}
}

static void check_flops(const char *line, double want)
{
	struct op o;
	char why[256] = "";
	checks++;
	if (op_parse(line, NULL, &o, why, sizeof why)) {
		printf("FAIL '%s' refused: %s\n", line, why);
		fails++;
		return;
	}
	double f = op_flops(&o);
	if (f != want) {
		printf("FAIL flops '%s' = %.17g (want %.17g)\n", line, f, want);
		fails++;
	}
}

int main(void)
{
	for (size_t i = 0; i < sizeof good / sizeof good[0]; i++)
		check_good(good[i].line, good[i].canon);
	for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++)
		check_bad(bad[i].line, bad[i].msg);
	for (size_t i = 0; i < sizeof work / sizeof work[0]; i++)
		check_flops(work[i].line, work[i].flops);

	/* keys the trace parser owns are accepted and ignored */
	struct op o;
	char why[256] = "", t[OP_TEXT_MAX];
	checks++;
	if (op_parse("gemm stream=2 m=1 n=2 k=3 after=7 dtype=fp16 stream=3", extra, &o, why, sizeof why) ||
	    (op_format(&o, t, sizeof t), strcmp(t, "gemm m=1 n=2 k=3 batch=1 dtype=fp16 acc=fp32 trans=nn "
	                                           "epilogue=none warm=0"))) {
		printf("FAIL extra keys: %s\n", why);
		fails++;
	}
	checks++;
	if (!op_parse("copy bytes=1GB stream=1", extra + 1, &o, why, sizeof why) ||
	    !strstr(why, "unknown key 'stream'")) {
		printf("FAIL extra list not honoured: %s\n", why);
		fails++;
	}

	/* a refusal leaves the op untouched */
	checks++;
	memset(&o, 0x5a, sizeof o);
	struct op before = o;
	if (!op_parse("gemm m=1", NULL, &o, why, sizeof why) || memcmp(&o, &before, sizeof o)) {
		printf("FAIL refused line changed the op\n");
		fails++;
	}

	/* a long line and a long token: refused with a bounded message */
	static char longline[100000];
	memset(longline, 'x', sizeof longline - 1);
	memcpy(longline, "gemm m=", 7);
	checks++;
	if (!op_parse(longline, NULL, &o, why, sizeof why) || strlen(why) > 120) {
		printf("FAIL long token: '%s'\n", why);
		fails++;
	}
	/* a small message buffer truncates, never overflows */
	char small[8];
	checks++;
	if (!op_parse("gem", NULL, &o, small, sizeof small) || strlen(small) != 7) {
		printf("FAIL small buffer: '%s'\n", small);
		fails++;
	}
	/* op_format reports the full length, snprintf-like */
	op_parse("gemm m=1 n=1 k=1 dtype=fp16", NULL, &o, why, sizeof why);
	checks++;
	if (op_format(&o, small, sizeof small) != strlen("gemm m=1 n=1 k=1 batch=1 dtype=fp16 acc=fp32 trans=nn "
	                                                 "epilogue=none warm=0") ||
	    strcmp(small, "gemm m=")) {
		printf("FAIL op_format truncation: '%s'\n", small);
		fails++;
	}

	/* names */
	checks++;
	if (strcmp(op_kind_name(OP_EMBED), "embedding") || strcmp(op_elem_name(EL_RMSNORM), "rmsnorm") ||
	    strcmp(op_attn_impl_name(ATTN_PAGED), "paged") || strcmp(op_kind_name(OP_KIND_COUNT), "?") ||
	    strcmp(op_elem_name(EL_COUNT), "?") || strcmp(op_attn_impl_name(ATTN_IMPL_COUNT), "?")) {
		printf("FAIL names\n");
		fails++;
	}

	printf("test_op: %d checks, %d failed\n", checks, fails);
	return fails != 0;
}
