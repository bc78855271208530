-- The run time the dispatcher predicted for the job when it sent this dispatch (p90 of like
-- jobs that finished, `grus_scheduler::predict`; NULL: no history like it). Budgets count a
-- running replica's cost ahead up to it (`billing::budget::expected_end`).
ALTER TABLE dispatches ADD COLUMN predicted_runtime_s bigint CHECK (predicted_runtime_s > 0);
