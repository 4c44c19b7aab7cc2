-- idempotency_key_kept returns at most one row (a key is unique in its company), but a set-returning
-- function is estimated at 1,000 rows unless it says otherwise. The keyed write joins it to each of
-- its writes, so the planner took a batch for 100,000 rows and costed the statement past
-- jit_above_cost: with JIT on (PostgreSQL's default), every keyed create compiled its plan to machine
-- code, seconds of work for a statement that runs in milliseconds. With the true estimate the plan is
-- the same shape and costs a few thousand.
ALTER FUNCTION idempotency_key_kept(uuid, text) ROWS 1;
