-- The control plane's identity (DESIGN.md: the protocol's incarnation).
--
-- Created once, with the database: every command carries it, and an agent serves one
-- incarnation only. A replaced database (a reinstall) is a new incarnation, so agents that
-- remember the old life's jobs and epochs refuse its commands loudly instead of confusing its
-- jobs with the old ones; re-pinning an agent is an operator's act (`grus-agent
-- --control-plane`). Restoring a backup keeps the old identity: run `grus-api migrate
-- --new-incarnation` after a restore, for the same reason.
CREATE TABLE control_plane (
    singleton   boolean PRIMARY KEY DEFAULT true CHECK (singleton),
    incarnation text NOT NULL CHECK (incarnation ~ '^[0-9a-f-]{36}$'),
    created_at  timestamptz NOT NULL DEFAULT now()
);
INSERT INTO control_plane (incarnation) VALUES (gen_random_uuid()::text);

-- Observed: the incarnation the cluster's agent says it serves (from its heartbeat).
ALTER TABLE clusters ADD COLUMN agent_control_plane text;

-- Intent: capacity reclaim freed in a cluster for a waiting job within its guarantee, held for
-- it until it is dispatched or the hold expires (the allocator deducts it for every other job).
-- Without it the evicted job, as old and as urgent, went straight back into the room it had
-- just left and was evicted again, in a loop.
CREATE TABLE capacity_holds (
    job_id      bigint NOT NULL REFERENCES jobs (id) ON DELETE CASCADE,
    cluster_id  text NOT NULL REFERENCES clusters (id) ON DELETE CASCADE,
    reservation jsonb NOT NULL,
    expires_at  timestamptz NOT NULL,
    PRIMARY KEY (job_id, cluster_id)
);
CREATE INDEX capacity_holds_expiry_idx ON capacity_holds (expires_at);

-- Agents' own Redis credentials (grus-api's /api/agent/credentials): the ACL user issued to the
-- cluster's agent for its registration token, and when. Rotating the token revokes them: the
-- health monitor deletes the ACL user (and its connections) of a cluster whose token changed
-- after they were issued.
ALTER TABLE clusters
    ADD COLUMN agent_redis_user text,
    ADD COLUMN agent_credentials_at timestamptz,
    ADD COLUMN agent_token_rotated_at timestamptz;
