-- The write path's exact-repeat lookup: active rows of a scope holding exactly a write's text.
-- The vector index's approximate walk can miss a stored point, even the one a repeated write
-- lands on (0.3-0.4 % of real-text lines in 20k-row namespaces); this lookup cannot. SQLite
-- has no hash function of its own, so the key is the text's first 64 characters: an index
-- on an expression needs no column of its own for every writer to keep, and the query
-- compares the whole text after (rows of a scope sharing their first 64 characters are
-- compared one by one).
CREATE INDEX memories_active_content ON memories (substr(content, 1, 64))
    WHERE status = 'active';
