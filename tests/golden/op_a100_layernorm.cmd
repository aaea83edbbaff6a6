op configs/a100.cfg "elem op=layernorm n=67108864 cols=8192 dtype=fp16" --explain
