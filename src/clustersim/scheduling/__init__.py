"""The decision interface, the policy registry and the built-in policies."""
