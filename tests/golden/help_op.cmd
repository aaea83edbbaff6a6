help op
