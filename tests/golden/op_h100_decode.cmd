op configs/h100.cfg "attn b=8 h=32 hkv=8 sq=1 skv=4096 d=128 dtype=bf16 impl=paged" --explain
