help roofline
