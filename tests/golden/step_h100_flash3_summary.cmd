step configs/h100.cfg --kernel 'attn b=4 h=16 sq=4096 skv=4096 d=128 dtype=bf16 impl=flash3' --summary
