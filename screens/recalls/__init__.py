"""Pane 8 — Recalls: what agents asked, replayed, and the retrieval checks operators pin."""
