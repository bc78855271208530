-- Run time history (issue 22, `api::runtime::history`): the jobs that succeeded, in the order
-- they ended, read incrementally by the predictor every half minute.
CREATE INDEX jobs_succeeded_idx ON jobs (updated_at, id) WHERE state = 'succeeded';
