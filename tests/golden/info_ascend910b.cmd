info configs/ascend910b.cfg
