-- The write path's exact-repeat lookup: active rows of a scope holding exactly a write's text.
-- The vector index's approximate walk can miss a stored point, even the one a repeated write
-- lands on (0.3-0.4 % of real-text lines in 20k-row namespaces); this lookup cannot. The key
-- is the text's md5 (a lookup key, not a security measure: the query compares the text too),
-- small and of one size however long the text.
CREATE INDEX memories_active_content ON memories (md5(content)) WHERE status = 'active';
