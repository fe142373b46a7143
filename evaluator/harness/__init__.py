"""The harness: controller under the paper protocol, model access, context window, runner and submission."""
