"""The boot service (`eng.boot`): exactly what an agent loads at start, as data and as one fenced block.

The block is `<memory-context ...>` … `</memory-context>`. Stored text is untrusted: any tag of
that name inside a memory or rule is neutralized (its `<` becomes `&lt;`), so content can never
close the block early or open a second one.
"""

from __future__ import annotations

import html
import math
import re

from engine.clock import iso
from engine.context import Context
from engine.lifecycle.rules import Rules
from engine.lifecycle.types import BootContext, BootItem
from engine.storage.port import Connection

TAG = "memory-context"
_TAG_RE = re.compile(r"<(?=\s*/?\s*memory-context)", re.IGNORECASE)


def neutralize(text: str) -> str:
    """One line of stored text that cannot open or close a <memory-context> block."""
    return _TAG_RE.sub("&lt;", " ".join(str(text).split()))


def _attr(value: str) -> str:
    return html.escape(" ".join(str(value).split()), quote=True)


def render_block(ctx: BootContext) -> str:
    """The fenced block an agent reads; one line per item, sections omitted when empty."""
    attrs = f' agent="{_attr(ctx.agent)}"' if ctx.agent else ""
    lines = [f'<{TAG}{attrs} generated="{iso(ctx.at)}">']
    sections = (
        ("Rejections (the user said no; never do these)", ctx.rejections),
        ("Active decisions", ctx.decisions),
        ("Open tasks", ctx.tasks),
    )
    for title, items in sections:
        if items:
            lines.append(f"## {title}")
            lines += [f"- [m{i.id}] {neutralize(i.content)}" for i in items]
    if ctx.rules:
        lines.append("## Rules (score · status)")
        lines += [f"- [r{r.id} · {r.score:g} · {r.status}] {neutralize(r.text)}" for r in ctx.rules]
    lines.append(f"</{TAG}>")
    return "\n".join(lines)


def estimate_tokens(text: str, chars_per_token: float) -> int:
    return math.ceil(len(text) / max(0.5, chars_per_token))


class Boot:
    """`eng.boot`: the boot context; `items` is also what the pre-action gate shows."""

    def __init__(self, ctx: Context, rules: Rules) -> None:
        self.ctx = ctx
        self.rules = rules

    def items(self, conn: Connection, category: str, agent: str | None, limit: int) -> list[BootItem]:
        """Inside the caller's read: live memories of `category` for `agent` (with the shared ones),
        core first, then by importance and recency."""
        rows = conn.lifecycle_queries.boot_items(category, agent, int(limit))
        return [BootItem(r["id"], r["category"], r["content"], r["agent"], r["tier"]) for r in rows]

    def context(self, agent: str | None = None, *, max_rules: int | None = None) -> BootContext:
        """What `agent` (None: every agent) loads at start: rejections, active decisions and
        tasks, the top critical/active rules by score, the fenced block and its token estimate.
        Items with no agent are shared by all agents."""
        ls = self.ctx.settings.lifecycle
        n = ls.boot_max_items
        with self.ctx.store.reading() as c:
            ctx = BootContext(
                agent=agent or None,
                at=self.ctx.clock.now(),
                decisions=self.items(c, "decision", agent, n),
                tasks=self.items(c, "task", agent, n),
                rejections=self.items(c, "rejected", agent, n),
                rules=self.rules.top(
                    c, agent, ("critical", "active"), ls.boot_max_rules if max_rules is None else max_rules
                ),
                tokens=0,
                text="",
            )
        ctx.text = render_block(ctx)
        ctx.tokens = estimate_tokens(ctx.text, ls.chars_per_token)
        return ctx
