-- How many rows hold each full-text term (fts5vocab over memories_fts; computed from the index
-- on read, nothing stored): the lexical search leaves out of a query the terms so common that
-- they would touch most rows for almost no ranking signal (`search_lexical_max_df`).
CREATE VIRTUAL TABLE memories_fts_vocab USING fts5vocab(memories_fts, 'row');
