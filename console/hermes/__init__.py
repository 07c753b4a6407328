"""The Hermes face: the memory provider Hermes loads, and its installer."""
