op configs/mi300x.cfg "copy bytes=1GiB src=host dst=hbm"
