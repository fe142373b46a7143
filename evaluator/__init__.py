"""The EarthVerse evaluator: tools, sandbox, agents, runner, traces, scoring and the `earthverse` CLI."""
