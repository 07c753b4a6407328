"""Every pane at the two sizes an operator meets: 80×24 (a laptop split, the smallest usable) and
200×50 (a wide monitor). Fixed seeded databases (FixedClock, HashEmbedder), no cursor blink, no
animation, a fixed header label. Each SVG was looked at as a PNG before it was accepted; review
the diff (`pytest --snapshot-report`) before `--snapshot-update`."""

from __future__ import annotations

import pytest

from .helpers import make_app, press_then
from .seed import seeded_engine
from .seed_lifecycle import seeded_lifecycle_engine

SIZES = {"80x24": (80, 24), "200x50": (200, 50)}


def _open_deploy(ids):
    return lambda app: app.pane("sessions").show_session("s-deploy", ids["deploy_msgs"][3])


def _pick_merge(ids):
    return lambda app: app.query_one("#proposals").select_key(ids["proposals"]["merge"])


# pane -> (seed, the keys and actions that bring it to a state worth looking at)
PANES = {
    "sessions": ("seed", lambda ids: press_then(after=_open_deploy(ids))),
    "search": ("seed", lambda ids: press_then("2", "slash", *"deploy fridays", "enter", "escape")),
    "rules": ("lifecycle", lambda ids: press_then("3", "j", "j")),
    "flows": ("lifecycle", lambda ids: press_then("4", "j", "j")),
    "curator": ("seed", lambda ids: press_then("5", after=_pick_merge(ids))),
    "decay": ("lifecycle", lambda ids: press_then("6")),
    "forget_audit": ("seed", lambda ids: press_then("7")),
    "help": ("seed", lambda ids: press_then("question_mark")),
    "search_confirm_archive": (
        "seed",
        lambda ids: press_then("2", "slash", *"deploy", "enter", "escape", "a"),
    ),
}


@pytest.mark.parametrize("size", list(SIZES))
@pytest.mark.parametrize("pane", list(PANES))
def test_pane_at_size(pane, size, snap_compare, tmp_path):
    seed, steps = PANES[pane]
    if seed == "seed":
        eng, ids = seeded_engine(tmp_path / "snap.db")
    else:
        eng, ids, _ = seeded_lifecycle_engine(tmp_path / "snap.db")
    try:
        assert snap_compare(make_app(eng), terminal_size=SIZES[size], run_before=steps(ids))
    finally:
        eng.close()
