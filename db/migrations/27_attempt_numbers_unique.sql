-- Each attempt of an event has its own number: the nth attempt of a webhook-id is one row of the log.
-- Numbers given twice before (two attempts that counted the log at once) are given again in the order
-- the attempts were made.
UPDATE webhook_deliveries d SET attempt = o.n
  FROM (SELECT company_id, id,
               row_number() OVER (PARTITION BY company_id, webhook_id ORDER BY attempted_at, id) AS n
          FROM webhook_deliveries) o
 WHERE o.company_id = d.company_id AND o.id = d.id AND d.attempt <> o.n;
CREATE UNIQUE INDEX webhook_deliveries_attempt ON webhook_deliveries (company_id, webhook_id, attempt);
DROP INDEX webhook_deliveries_by_webhook_id;
