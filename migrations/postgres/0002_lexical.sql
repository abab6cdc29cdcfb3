-- Full-text (lexical) index for hybrid retrieval. `lexical` holds the row's terms as computed by
-- src/lexical.rs (words, and character bigrams for CJK text, which PostgreSQL's parsers do not
-- segment), NULL until the store fills it in. The 'simple' configuration indexes them as they
-- are: no stemming, no stop words, the same terms SQLite's FTS5 index gets.
ALTER TABLE memories ADD COLUMN lexical TEXT;
ALTER TABLE memories ADD COLUMN lexical_tsv TSVECTOR
    GENERATED ALWAYS AS (to_tsvector('simple', coalesce(lexical, ''))) STORED;
CREATE INDEX memories_lexical ON memories USING GIN (lexical_tsv);
CREATE INDEX memories_lexical_missing ON memories (id) WHERE lexical IS NULL;
