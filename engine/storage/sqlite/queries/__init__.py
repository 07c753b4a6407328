"""The read models' sqlite SQL (the port's engine/storage/queries/)."""
