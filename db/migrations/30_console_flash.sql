-- The console's flash: what a form's action did, shown once by the page its redirect names
-- (Post/Redirect/Get), then gone. flash_path is that page's path; flash is the message sealed with a key
-- derived from the session's token, which only the cookie holds, so a copy of the table shows no key or
-- secret a flash carries.
ALTER TABLE console_sessions ADD COLUMN flash_path text, ADD COLUMN flash bytea;
