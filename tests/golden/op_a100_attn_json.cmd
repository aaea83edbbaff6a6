op configs/a100.cfg "attn b=8 h=16 sq=2048 skv=2048 d=128 causal=1 dtype=fp16 impl=flash2 dir=bwd" --json
