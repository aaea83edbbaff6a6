help export
