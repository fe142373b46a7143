"""The EarthVerse leaderboard Space: the paper-reported leaderboard beside every rescored submission,
breakdown and cost views, a task and trace explorer, and submission with server-side rescoring.

Run `python space/app.py`; configuration comes from the environment (space/config.py): EARTHVERSE_RELEASE,
EARTHVERSE_PRIVATE_RELEASE, EARTHVERSE_STORE, EARTHVERSE_JUDGE, EARTHVERSE_MAX_UPLOAD_MB,
EARTHVERSE_DAILY_LIMIT, EARTHVERSE_LOCAL_USER, EARTHVERSE_RESULTS_REPO, …; GRADIO_SERVER_PORT as Gradio
reads it. API: `submit` (one file) and `status` (a receipt) answer {"receipt", "status", "message"}.
"""

from __future__ import annotations

import os
import sys
from pathlib import Path

# No analytics calls home: the Space must start and run with no network.
os.environ.setdefault("GRADIO_ANALYTICS_ENABLED", "False")

_HERE = Path(__file__).resolve().parent
# On the Hub the project code sits beside app.py; in the repository it is one folder up.
sys.path.insert(0, str(_HERE if (_HERE / "space").is_dir() else _HERE.parent))

import gradio as gr  # noqa: E402  (after the project path is known)

from space.config import Settings  # noqa: E402
from space.mirror import Mirror  # noqa: E402
from space.services import Services, build_services  # noqa: E402
from space.ui import THEME, build_ui  # noqa: E402


def build_app(services: Services) -> gr.Blocks:
    """The Gradio app over already-built services (tests build the services themselves)."""
    return build_ui(services)


def main() -> None:
    settings = Settings()
    mirror = Mirror.from_settings(settings)
    mirror.restore()
    services = build_services(settings)
    mirror.start()
    build_app(services).launch(theme=THEME)


if __name__ == "__main__":
    main()
