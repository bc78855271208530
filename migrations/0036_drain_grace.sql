-- The grace a drain was asked with, kept while it lasts: work that lands on a draining
-- cluster or node after the drain (dispatched before it, placed after) is evicted by the
-- allocator's round with the same grace (`db::operations::evict_landed_on_drains`).
-- NULL: not draining, or drained before this column (the allocator's default grace).
ALTER TABLE clusters ADD COLUMN drain_grace_s integer CHECK (drain_grace_s >= 0);
ALTER TABLE node_cordons ADD COLUMN drain_grace_s integer CHECK (drain_grace_s >= 0);
