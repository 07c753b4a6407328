"""The audit trail as a service (`eng.audit`): reading it, verifying it, keying an older chain.

Rows are appended by every writer inside its own transaction (engine.audit.log.append); this
service owns what reads or guards the whole trail: the head anchor kept outside the database
(registered as an after-commit hook when the service is built), the chain check, and the heads
that executed forget cases recorded, so a log cut back past a case shows even without an anchor.
"""

from __future__ import annotations

from engine.audit.anchor import anchor_hook
from engine.audit.hashing import keyed_from
from engine.audit.log import AuditEntry, adders, append, list_entries, rekey
from engine.audit.verify import ChainCheck, verify_chain
from engine.clock import parse_time
from engine.context import Context
from engine.forget.heads import check_case_heads
from engine.identity_names import actor_filter
from engine.keys import key_missing, missing_key_error


class AuditLog:
    def __init__(self, ctx: Context) -> None:
        self.ctx = ctx
        if key_missing():  # a keyed chain here: its key is restored, never made anew
            with ctx.store.reading() as conn:
                if keyed_from(conn) is not None:
                    raise missing_key_error()
        # After each committed write that moved the head, move the anchor outside the database.
        ctx.store.after_commit.append(anchor_hook())

    def log(
        self,
        *,
        target: str | None = None,
        actor: str | None = None,
        action: str | None = None,
        since: float | str | None = None,
        until: float | str | None = None,
        limit: int = 500,
        text: str | None = None,
    ) -> list[AuditEntry]:
        """Rows matching every given filter, newest first (`since`/`until`: a time or ISO text;
        `action` ending in `*`: a prefix; `text`: words found in the reason or the summary)."""
        t0 = parse_time(since) if isinstance(since, str) else since
        t1 = parse_time(until) if isinstance(until, str) else until
        with self.ctx.store.reading() as conn:
            return list_entries(
                conn,
                target=target,
                actor=actor_filter(actor) if actor else None,
                action=action,
                since=t0,
                until=t1,
                limit=limit,
                text=text,
            )

    def writers(self, memory_ids: list[int]) -> dict[int, str]:
        """The actor who added each memory (the verified identity: an MCP token's actor, the OS
        user...), to show beside the memory's `agent`, which is only what the writer claimed."""
        with self.ctx.store.reading() as conn:
            return adders(conn, "memory", list(memory_ids)[:1000])

    def refused(self, action: str, *, target_kind: str = "", target_id: object = "", reason: str = "") -> int:
        """Record that the current actor tried `action` and was refused (action `refused`; the
        attempted action and why in the summary). Nothing else is written."""
        summary = {"attempted": action, "why": reason}
        return self.ctx.store.write(
            lambda c: append(
                c, at=self.ctx.clock.now(), actor=self.ctx.actor, action="refused",
                target_kind=target_kind, target_id=target_id, reason=reason, summary=summary,
            )
        )  # fmt: skip

    def verify(self) -> ChainCheck:
        """The keyed chain, its head against the anchor, and every forget case's recorded head:
        a case whose head row is gone (or is another row now) means the log was cut or rewritten."""
        with self.ctx.store.reading() as conn:
            chk = verify_chain(conn)
            cases = check_case_heads(conn)
        if cases:
            if chk.ok:
                chk.message = f"audit log does not hold what forget cases recorded: {cases[0]}"
            chk.ok = False
            chk.problems.extend(cases)
        return chk

    def rekey(self) -> str:
        """Key an unkeyed chain now (an older database), rather than on its next write."""
        return self.ctx.store.write(lambda c: rekey(c, at=self.ctx.clock.now(), actor=self.ctx.actor))
