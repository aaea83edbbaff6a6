op configs/t4.cfg "conv n=32 c=64 h=56 w=56 k=64 r=3 s=3 pad=1 dtype=fp16" --explain
