"""Stubs generated from Proto/adloader/v1 (grpcio-tools; `make proto` regenerates them)."""
