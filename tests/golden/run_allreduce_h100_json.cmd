run configs/h100.cfg traces/allreduce_8.trace --json
