-- Waymark, version 17: a dead letter keeps the handler's exception.
--
-- The class name and message of the exception that led to the dead letter (the handler's last one
-- when the retries ran out, or the cause given with an explicit dead-letter acknowledgement); both
-- null when there was none. The library bounds them (class 500, message 2,000 characters, cut
-- between code points) and replaces a NUL; the columns themselves take any text.
ALTER TABLE "${flyway:defaultSchema}".dead_letters
  ADD COLUMN error_class   text,
  ADD COLUMN error_message text;
