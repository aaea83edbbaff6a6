info configs/a100.cfg
