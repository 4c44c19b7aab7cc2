-- One representation of a report: its inspectors and invoice items live on the report row only, in the
-- columns of migration 4 (inspector_names and inspector_emails, invoice_descriptions and invoice_prices,
-- each pair in the order given). Every read has shown those columns since migration 4 filled them from
-- the child rows, and every write since has set them together with the rest of the row, under the row's
-- lock. The child rows were a second copy that one statement could not keep in step: concurrent updates
-- of one report deleted "surplus" rows as of their own snapshot, blind to rows another update had just
-- written (three updates with 4, 0 and 1 invoice items left 4 rows behind a report showing 0). Where the
-- two differ, the child rows are the stale side, so there is nothing to carry over: they go.
--
-- Inspectors stay tied to the company's users where the tie is checked: a create or update matches each
-- inspectorEmails address to a user of the company and writes nothing when one is unknown. The report
-- records each inspector as assigned (the user's name and stored address), as its displayed copy always
-- did: a user changed later does not rewrite reports written before, and a user removed later stays
-- named on them, so every report keeps reading as it was written.
DROP TABLE report_inspectors, report_invoice_items;

-- What the child tables' keys and checks guaranteed, now on the row: each inspector has a name and an
-- address, each invoice item a description and a price, and no price is negative.
ALTER TABLE reports
  ADD CONSTRAINT reports_inspectors_paired CHECK (cardinality(inspector_names) = cardinality(inspector_emails)),
  ADD CONSTRAINT reports_invoice_items_paired CHECK (cardinality(invoice_descriptions) = cardinality(invoice_prices)),
  ADD CONSTRAINT reports_invoice_prices_not_negative CHECK (0 <= ALL (invoice_prices));
