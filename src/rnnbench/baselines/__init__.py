"""Count-based baselines: the unigram and interpolated modified Kneser-Ney (ngram), the agreement probe's
chance and nearest-noun heuristic (agreement), and their tables for a prepared corpus (tables)."""
