"""Agents: the protocol an agent implements, and the built-in kinds (litellm, replay, scripted)."""
