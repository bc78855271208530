-- A queue's interactive reserve (issue 21): GPU milli of its quota kept for interactive
-- workspaces, so that a person's session is admitted at once instead of waiting behind the
-- queue's batch work. Batch work and service replicas are admitted as if the queue's `gpu`
-- guarantee and limit were smaller by the part of the reserve workspaces do not hold
-- (`admission::decide`); what workspaces hold is their demands' `interactive` key, summed into
-- the queue's usage by the job-demand triggers like every other key.
ALTER TABLE queues ADD COLUMN interactive_reserve_milli bigint NOT NULL DEFAULT 0
    CHECK (interactive_reserve_milli BETWEEN 0 AND 1000000000);

-- 0008's function, returning the reserve with the quotas (the row type changes: drop first).
DROP FUNCTION lock_queues_for_admission(bigint[], bigint[], int);
CREATE FUNCTION lock_queues_for_admission(p_queues bigint[], p_projects bigint[], fold_above int)
RETURNS TABLE (q_id bigint, q_project_id bigint, q_name text, q_weight double precision, q_can_borrow boolean,
               q_created_at timestamptz, isolation text, quotas json, usage json,
               q_interactive_reserve bigint)
LANGUAGE plpgsql VOLATILE SET plan_cache_mode = force_generic_plan AS $$
DECLARE
    locked bigint[];
BEGIN
    -- LockRows sits above the sort: rows are locked in id order.
    SELECT array_agg(l.id) INTO locked FROM (
        SELECT q.id FROM queues q
        WHERE (q.id, q.project_id) IN (SELECT w.queue_id, w.project_id
                                       FROM unnest(p_queues, p_projects) AS w(queue_id, project_id))
        ORDER BY q.id
        FOR NO KEY UPDATE OF q
    ) l;
    IF locked IS NULL THEN
        RETURN;
    END IF;
    WITH crowded AS (
        SELECT d.queue_id FROM queue_usage_deltas d WHERE d.queue_id = ANY (locked)
        GROUP BY d.queue_id HAVING count(*) > fold_above
    ), gone AS (
        DELETE FROM queue_usage_deltas d USING crowded c WHERE d.queue_id = c.queue_id
        RETURNING d.queue_id, d.resource, d.amount
    )
    INSERT INTO queue_usage_deltas (queue_id, resource, amount)
        SELECT g.queue_id, g.resource, SUM(g.amount)::bigint FROM gone g
        GROUP BY g.queue_id, g.resource HAVING SUM(g.amount) <> 0;
    RETURN QUERY SELECT q.id, q.project_id, q.name, q.weight, q.can_borrow, q.created_at,
        current_setting('transaction_isolation'),
        (SELECT COALESCE(json_agg(json_build_array(qq.resource, qq.guaranteed, qq.limit_amount)
                                  ORDER BY qq.resource), '[]')
           FROM queue_quotas qq WHERE qq.queue_id = q.id),
        (SELECT COALESCE(json_agg(json_build_array(s.resource, s.amount) ORDER BY s.resource), '[]')
           FROM (SELECT d.resource, SUM(d.amount)::bigint AS amount FROM queue_usage_deltas d
                 WHERE d.queue_id = q.id GROUP BY d.resource HAVING SUM(d.amount) <> 0) s),
        q.interactive_reserve_milli
    FROM queues q WHERE q.id = ANY (locked) ORDER BY q.id;
END;
$$;
