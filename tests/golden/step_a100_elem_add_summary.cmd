step configs/a100.cfg --kernel 'elem op=add n=16777216 dtype=fp16' --summary --policy two-level
