-- The answer deadline of a dispatch (issue 18): the control plane gives the dispatch up unless
-- the agent's `Scheduled` report was appended to the cluster's event stream before it (the
-- entry id's time decides, for the agent and the api alike). Sent with the Dispatch command, so
-- the agent launches nothing the control plane may already have given away. NULL on
-- dispatches made before this migration: their deadline is `dispatched_at` plus the timeout.
ALTER TABLE dispatches ADD COLUMN answer_by timestamptz;

-- Each round looks for dispatches past their deadline among the open ones (the table keeps
-- every dispatch ever made).
CREATE INDEX dispatches_answer_by_idx ON dispatches (answer_by) WHERE outcome IN ('pending', 'acknowledged');
