-- Every row's HMAC (`<key id>:<hex>`, see src/signing.rs), hot and archived. NULL only in a
-- store from before signing; the first start after this migration signs those rows once
-- (meta `rows_signed`), after which a row without one is tampered.
ALTER TABLE memories ADD COLUMN signature TEXT;
ALTER TABLE memories_archive ADD COLUMN signature TEXT;
-- Rows found tampered (on a read, or by `hindsight verify`): what the capacity job alerts on
-- until `verify` finds them good again, they are gone, or `resign` signs them.
CREATE TABLE tampered (
    id TEXT NOT NULL,
    row_table TEXT NOT NULL,
    namespace TEXT NOT NULL,
    reason TEXT NOT NULL,
    detected_at INTEGER NOT NULL,
    PRIMARY KEY (id, row_table)
);
