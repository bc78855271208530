-- Admission in batches (BENCHMARKS.md "Control plane API", session 5).
--
-- 1. The job-demand trigger's join to `jobs` (0007) is planned once per session by PL/pgSQL
--    and the plan is kept. A session that starts while `jobs` is small or not yet analyzed
--    plans a hash join over a sequential scan of `jobs`, and keeps running it as the table
--    grows: each admission then read every job (4.5 ms per submission at 5,000 jobs). The
--    lookup per changed demand row is now a LATERAL subquery the planner cannot flatten
--    (OFFSET 0), so it is a primary-key probe whatever the statistics say.
CREATE OR REPLACE FUNCTION job_demands_queue_usage() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    IF TG_OP IN ('INSERT', 'UPDATE') THEN
        INSERT INTO queue_usage_deltas (queue_id, resource, amount)
            SELECT j.queue_id, a.resource, SUM(a.amount)
            FROM added a
            CROSS JOIN LATERAL (SELECT queue_id, state FROM jobs WHERE id = a.job_id OFFSET 0) j
            WHERE job_state_holds_quota(j.state) GROUP BY j.queue_id, a.resource;
    END IF;
    IF TG_OP IN ('DELETE', 'UPDATE') THEN
        INSERT INTO queue_usage_deltas (queue_id, resource, amount)
            SELECT j.queue_id, r.resource, -SUM(r.amount)
            FROM removed r
            CROSS JOIN LATERAL (SELECT queue_id, state FROM jobs WHERE id = r.job_id OFFSET 0) j
            WHERE job_state_holds_quota(j.state) GROUP BY j.queue_id, r.resource;
    END IF;
    RETURN NULL;
END;
$$;

-- 2. Admission locks every queue of a batch of submissions at once (`db::lock_queues_for_admission`),
--    in id order so that two admissions locking overlapping sets cannot deadlock, folds the
--    usage deltas of those with more than `fold_above`, and returns one row per locked queue
--    with its quotas and usage. As in 0007, each statement of this VOLATILE function takes a
--    fresh snapshot under READ COMMITTED: the fold and the reads after the lock see every job
--    the previous holders of the locks committed. A pair (queue, project) that names no
--    queue of that project gets no row.
--    Generic plans only: with the array arguments, the planner's custom plans never look
--    cheap enough to give up, so PL/pgSQL planned every statement again at every call (a
--    third of the function's time).
CREATE FUNCTION lock_queues_for_admission(p_queues bigint[], p_projects bigint[], fold_above int)
RETURNS TABLE (q_id bigint, q_project_id bigint, q_name text, q_weight double precision, q_can_borrow boolean,
               q_created_at timestamptz, isolation text, quotas json, usage json)
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
                 WHERE d.queue_id = q.id GROUP BY d.resource HAVING SUM(d.amount) <> 0) s)
    FROM queues q WHERE q.id = ANY (locked) ORDER BY q.id;
END;
$$;

-- 3. The admitted jobs of a batch, inserted by one statement (`db::insert_admitted_jobs`): the
--    jobs in state `admitted` with their tasks, replicas and quota demands, and two events
--    each. Arrays, one element per job (`p_`), per task (`t_`, `t_job` the job's 1-based
--    position) and per demand (`d_`). Returns the jobs in the order given. A function for its
--    plan: the planner's custom plans for a statement over array parameters never look
--    costlier than the generic one, so a prepared statement was planned again at every call
--    (0.45 ms, half of a one-job batch); here it is planned once per session.
CREATE FUNCTION insert_admitted_jobs(
    p_project bigint[], p_queue bigint[], p_name text[], p_priority int[], p_class text[], p_preemptible boolean[],
    p_spec jsonb[], p_submitted_by bigint[], p_borrowed boolean[], p_actor text[], p_submitted text[],
    p_admitted text[], t_job bigint[], t_name text[], t_replicas int[], t_spec jsonb[], d_job bigint[],
    d_resource text[], d_amount bigint[])
RETURNS SETOF jobs
LANGUAGE plpgsql VOLATILE SET plan_cache_mode = force_generic_plan AS $$
BEGIN
    RETURN QUERY WITH input AS (
      SELECT * FROM UNNEST(p_project, p_queue, p_name, p_priority, p_class, p_preemptible,
                           p_spec, p_submitted_by, p_borrowed, p_actor, p_submitted, p_admitted)
        WITH ORDINALITY AS j(project_id, queue_id, name, priority, priority_class, preemptible, spec,
                             submitted_by, borrowed, actor, submitted_cause, admitted_cause, ord)
    ), ids AS MATERIALIZED (
      SELECT input.ord, nextval('jobs_id_seq') AS id FROM input ORDER BY input.ord
    ), job AS (
      INSERT INTO jobs (id, project_id, queue_id, name, priority, priority_class, preemptible, spec, submitted_by,
                        state, borrowed)
      SELECT ids.id, i.project_id, i.queue_id, i.name, i.priority, i.priority_class, i.preemptible, i.spec,
             i.submitted_by, 'admitted', i.borrowed
      FROM input i JOIN ids USING (ord) ORDER BY ids.id
      RETURNING *
    ), task_rows AS (
      INSERT INTO tasks (job_id, name, replicas, spec)
      SELECT ids.id, t.name, t.replicas, t.spec
      FROM UNNEST(t_job, t_name, t_replicas, t_spec) WITH ORDINALITY AS t(job_ord, name, replicas, spec, ord)
      JOIN ids ON ids.ord = t.job_ord ORDER BY t.ord
      RETURNING id, job_id, replicas
    ), replica_rows AS (
      INSERT INTO replicas (job_id, task_id, index)
      SELECT r.job_id, r.id, g FROM task_rows r, generate_series(0, r.replicas - 1) g
    ), demand_rows AS (
      INSERT INTO job_demands (job_id, resource, amount)
      SELECT ids.id, d.resource, d.amount
      FROM UNNEST(d_job, d_resource, d_amount) AS d(job_ord, resource, amount)
      JOIN ids ON ids.ord = d.job_ord
    ), event_rows AS (
      INSERT INTO job_events (job_id, from_state, to_state, cause, actor)
      SELECT ids.id, e.from_state, e.to_state,
             CASE e.step WHEN 1 THEN i.submitted_cause ELSE i.admitted_cause END, i.actor
      FROM input i JOIN ids USING (ord),
           (VALUES (1, NULL, 'pending'), (2, 'pending', 'admitted')) AS e(step, from_state, to_state)
      ORDER BY ids.id, e.step
    )
    SELECT job.* FROM job JOIN ids ON ids.id = job.id ORDER BY ids.ord;
END;
$$;

DROP FUNCTION lock_queue_for_admission(bigint, bigint, int);
