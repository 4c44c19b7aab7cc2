-- A publish whose webhook is due no longer holds the report row locked during the delivery (issue 11):
-- it claims the report in one short transaction, delivers with no database resource held, then records
-- the outcome in a second one. While the claim lives, a second publish and partner updates of the report
-- are refused (409), so one report never has two deliveries at once and what is sent is what gets
-- published. The claim expires by itself, so a process that dies mid-delivery blocks the report only
-- until publish_claimed_until.
ALTER TABLE reports
  ADD COLUMN publish_claim uuid,
  ADD COLUMN publish_claimed_until timestamptz;
