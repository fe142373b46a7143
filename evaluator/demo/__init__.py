"""The embedded DEMO: an invented event package with two tasks and their ground truth."""
