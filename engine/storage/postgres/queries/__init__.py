"""The read models' postgres SQL (the port's engine/storage/queries/)."""
