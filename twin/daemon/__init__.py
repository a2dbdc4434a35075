"""The supervisor: starts Redis, the workers and the connectors, and stops them cleanly (`twin up`)."""
