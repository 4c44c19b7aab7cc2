-- The delivery worker takes due events company by company, each company's oldest first and at most
-- its share of places: this index gives the companies with pending events and each one's events in
-- that order, so a take reads about as many rows as it takes, however many events are waiting.
-- Without it, each take reads and sorts every due event of every company.
DROP INDEX webhook_events_due;
CREATE INDEX webhook_events_due_by_company ON webhook_events (company_id, next_attempt_at, feed_seq)
  WHERE status = 'pending';
