step configs/a100.cfg --kernel 'attn b=4 h=16 sq=2048 skv=2048 d=128 dtype=fp16 impl=flash2' --summary
