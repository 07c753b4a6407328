"""What every face of the shell may import: terminal-safe text and the environment's choices."""
