-- Billing exports per scope, and change notifications for GraphQL subscriptions.

-- Exports: a platform-wide export (tenant_id NULL) or one tenant's. One file per scope, period
-- and format: exporting the same closed period again returns the stored bytes.
ALTER TABLE exports
    ADD COLUMN tenant_id bigint REFERENCES tenants (id) ON DELETE RESTRICT,
    ADD COLUMN row_count bigint NOT NULL DEFAULT 0 CHECK (row_count >= 0),
    ADD COLUMN currency text NOT NULL DEFAULT 'USD' CHECK (currency ~ '^[A-Z]{3}$');
ALTER TABLE exports DROP CONSTRAINT exports_period_format_key;
ALTER TABLE exports ADD CONSTRAINT exports_scope_period_format_key
    UNIQUE NULLS NOT DISTINCT (tenant_id, period_start, period_end, format);

-- Usage queries select intervals overlapping a period; open intervals (ended_at NULL) of
-- running replicas must be found whatever their start.
CREATE INDEX usage_ledger_open_idx ON usage_ledger (started_at) WHERE ended_at IS NULL;

-- Subscriptions: every api replica LISTENs on these channels, so a change recorded through
-- any replica (or the ingester) reaches every subscriber. NOTIFY is delivered on commit, and
-- never for a rolled-back change. Payloads carry ids only: subscribers reload the row and
-- authorize it themselves.
CREATE FUNCTION job_events_notify() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    PERFORM pg_notify('grus_job_events', json_build_object(
        'id', NEW.id,
        'job_id', NEW.job_id,
        'project_id', (SELECT project_id FROM jobs WHERE id = NEW.job_id)
    )::text);
    RETURN NULL;
END;
$$;
CREATE TRIGGER job_events_notify AFTER INSERT ON job_events
    FOR EACH ROW EXECUTE FUNCTION job_events_notify();

CREATE FUNCTION clusters_notify() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    PERFORM pg_notify('grus_clusters', NEW.id);
    RETURN NULL;
END;
$$;
-- Heartbeats rewrite the row every few seconds; only a real change of capacity, health or
-- cordon notifies.
CREATE TRIGGER clusters_notify AFTER UPDATE ON clusters
    FOR EACH ROW
    WHEN (OLD.capacity IS DISTINCT FROM NEW.capacity
          OR OLD.health IS DISTINCT FROM NEW.health
          OR OLD.cordoned IS DISTINCT FROM NEW.cordoned)
    EXECUTE FUNCTION clusters_notify();
