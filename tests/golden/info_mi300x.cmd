info configs/mi300x.cfg
