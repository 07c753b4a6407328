"""Snapshots of panes 3 (Rules), 4 (Flows) and 6 (Decay): a fixed seeded database, a frozen clock
(FixedClock at T0), a 120×40 terminal, no cursor blink, a fixed header label. Review the SVG diff
(`pytest --snapshot-report`) before `--snapshot-update`."""

from __future__ import annotations

import pytest

from .helpers import make_app, settle
from .seed_lifecycle import seeded_lifecycle_engine

SIZE = (120, 40)


@pytest.fixture
def app(tmp_path):
    eng, ids, _ = seeded_lifecycle_engine(tmp_path / "snap.db")
    yield make_app(eng)
    eng.close()


def _open(*keys: str):
    async def run_before(pilot) -> None:
        await settle(pilot.app, pilot)
        for key in keys:
            await pilot.press(key)
            await settle(pilot.app, pilot)

    return run_before


def test_rules_pane(app, snap_compare):
    # the third rule by score ("Quote market times in ET"): history with a set score and decay
    assert snap_compare(app, terminal_size=SIZE, run_before=_open("3", "j", "j"))


def test_rules_boot_preview(app, snap_compare):
    assert snap_compare(app, terminal_size=SIZE, run_before=_open("3", "b"))


def test_flows_pane(app, snap_compare):
    # the flagged rollback flow selected: steps, runs, sparkline and chart
    assert snap_compare(app, terminal_size=SIZE, run_before=_open("4", "j", "j"))


def test_decay_pane(app, snap_compare):
    assert snap_compare(app, terminal_size=SIZE, run_before=_open("6"))
