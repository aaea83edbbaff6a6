sweep configs/h100.cfg traces/allreduce_8.trace --set links.nvlink.count=9,18
