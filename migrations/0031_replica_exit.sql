-- How a replica ended (issue 22): its main container's exit code, when one is known, and the
-- termination reason (`grus_protocol::wire::Termination::as_str`), as the agent reported them
-- with its terminal state. Both are cleared when the replica waits again.
ALTER TABLE replicas ADD COLUMN exit_code integer, ADD COLUMN termination text;
