"""Forget requests: tracked cases that remove content everywhere it lives and prove it is gone.

open -> previewed -> executed -> verified. Executing deletes, in one transaction, the selected
memories (their keyword and vector index entries go with them), the merged memories built
from them (forgotten too; their other sources are restored to active, so only the forgotten part is
lost), rules promoted from them, the messages and sessions in scope, the proposals that mention any
of it (their snapshots hold copies), and the audit previews quoting it (redacted in place, no re-hash;
the forget's own audit row names the rows), flows in scope, and the quotes of it in records that
stay (forget_scrub). Then FTS indexes are optimized (old segments merged away; secure_delete zeroes
the freed pages), the curator's report files are redacted, the WAL is checkpointed and truncated,
and the bytes of the database's files (the store's eraser names them: db, -wal, -shm on SQLite)
and reports are scanned in a child process. SQLite-only steps live in the store's eraser
(engine/storage/erasure.py). Tombstones (engine/forget/tombstones.py), cases and audit rows keep
keyed hashes, never the text; the
texts verification needs are sealed outside the database until it passes (forget/seal.py), so a case
interrupted anywhere is finished by running `execute` (or `verify`) again from any process.
Verifying is in forget/verifying.py.
"""

from __future__ import annotations

import builtins
import os
import time
from pathlib import Path
from typing import TYPE_CHECKING, Any

from engine.audit import log as audit
from engine.audit import redact as audit_redact
from engine.clock import DAY, parse_time
from engine.curator.report import report_files
from engine.errors import InvalidInput, NotFound, cut
from engine.forget import case_actions
from engine.forget import verifying as forget_verifying
from engine.forget.cases import as_int, listed_items, query_digest, row_to_request, scope_value
from engine.forget.delete import delete_case
from engine.forget.match import Matcher, check_mode
from engine.forget.seal import discard, new_token, unseal
from engine.forget.select import close_over, resolve
from engine.forget.tombstones import is_forgotten
from engine.forget.types import (
    FORGET_SCOPES,
    ForgetItem,
    ForgetPreview,
    ForgetRequest,
    ForgetResult,
    Verification,
)
from engine.forget.verify import (
    redact_reports,
)
from engine.forget.workflow import (
    OPEN_STATES,
    check_can_execute,
    due,
    excluded,
    match_mode,
    stamp,
)

if TYPE_CHECKING:
    from engine.context import Context
    from engine.storage.port import Connection, Storage


class Forget:
    """Forget cases: open, preview, execute, verify (or `run` for all in one call)."""

    def __init__(self, ctx: Context) -> None:
        self.ctx = ctx

    @property
    def store(self) -> Storage:
        return self.ctx.store

    @property
    def path(self) -> Path:
        return self.ctx.path

    # -- cases -------------------------------------------------------------------------------------
    def open(
        self,
        scope_kind: str,
        values: Any,
        reason: str,
        deadline: float | str | None = None,
        match: str | None = None,
    ) -> ForgetRequest:
        """Open a case. `values`: memory ids (scope memory), a session id, an agent, a user or a
        query text; a query matches in `match` mode (word, the default; phrase; substring:
        engine/forget/match.py). The deadline defaults to settings `[forget] deadline_days` (30)
        days after the request."""
        mode = check_mode(match)
        if scope_kind not in FORGET_SCOPES:
            raise InvalidInput(f"unknown scope {cut(scope_kind)}; use one of {', '.join(FORGET_SCOPES)}")
        if not isinstance(reason, str) or not reason.strip():
            raise InvalidInput("a forget request needs a reason")
        value = scope_value(scope_kind, values)
        now = self.ctx.clock.now()
        actor = self.ctx.actor
        dl = parse_time(deadline) if isinstance(deadline, str) else deadline
        dl = now + self.ctx.settings.forget.deadline_days * DAY if dl is None else float(dl)
        if scope_kind == "query":
            Matcher(value, mode)  # a query with nothing to match is refused up front

        def write(conn: Connection) -> int:
            if scope_kind != "query":
                resolve(conn, scope_kind, value)  # a scope naming nothing is refused up front
            rid = conn.forget_requests.insert(scope_kind, value, reason, actor, now, dl)
            if scope_kind == "query":
                conn.forget_requests.set_workflow(rid, {"match": mode})
            # A query names the content itself: the audit keeps only its hash.
            shown = query_digest(value) if scope_kind == "query" else value
            audit.append(conn, at=now, actor=actor, action="forget-request", target_kind="forget_request",
                         target_id=rid, reason=reason,
                         summary={"scope": scope_kind, "value": shown,
                                  **({"match": mode} if scope_kind == "query" else {})})  # fmt: skip
            return rid

        return self.get(self.store.write(write))

    def get(self, request_id: int) -> ForgetRequest:
        rid = as_int(request_id)
        r = self.store.query(lambda c: c.forget_requests.get(rid))
        if r is None:
            raise NotFound(f"no forget request with id {request_id}")
        return row_to_request(r)

    def list(self, status: str | None = None, limit: int = 500) -> builtins.list[ForgetRequest]:
        rows = self.store.query(lambda c: c.forget_requests.listed(status or None, int(limit)))
        return [row_to_request(r) for r in rows]

    def deadlines(self) -> tuple[int, int | None]:
        """(open cases past their deadline, whole days to the nearest deadline not yet past)."""
        now = self.ctx.clock.now()
        dues = [due(c, now) for s in OPEN_STATES for c in self.list(status=s)]
        ahead = [d.days_left for d in dues if not d.overdue and d.days_left is not None]
        return sum(d.overdue for d in dues), min(ahead) if ahead else None

    # -- preview -------------------------------------------------------------------------------------
    def preview(self, request_id: int) -> ForgetPreview:
        """What executing would remove (the matched items and the cascade), recorded as ids."""
        req = self.get(request_id)
        if req.status not in ("open", "previewed"):
            raise InvalidInput(f"forget request {req.id} is {req.status}; it can no longer be previewed")
        now = self.ctx.clock.now()
        actor = self.ctx.actor
        eraser = self.store.eraser

        def write(conn: Connection) -> tuple[builtins.list[ForgetItem], dict]:
            with eraser.tolerant(conn):
                mode = match_mode(req)
                own = resolve(conn, req.scope_kind, req.scope_value, mode)
                sel = own.without(excluded(req))
                full = close_over(conn, sel, cascade_sources=req.scope_kind == "memory")
                matcher = Matcher(req.scope_value, mode) if req.scope_kind == "query" else None
                items = listed_items(conn, full, sel, matcher)
                keep = {"seal": req.selected["seal"]} if req.selected.get("seal") else {}  # an earlier try's
                conn.forget_requests.previewed(req.id, {**sel.as_ids(), **keep}, full.counts())
                audit.append(conn, at=now, actor=actor, action="forget-preview", target_kind="forget_request",
                             target_id=req.id, summary=full.counts())  # fmt: skip
                return items, full.counts()

        items, counts = self.store.write(write)
        return ForgetPreview(self.get(req.id), items, counts, excluded(req))

    # -- narrowing, withdrawal, approval, accepted residue (engine/forget/workflow.py) -------------
    def exclude(
        self, request_id: int, items: builtins.list[tuple[str, Any]], keep: bool = False
    ) -> ForgetPreview:
        """Drop records ((kind, id): memory, message, rule, session, flow) from an open case's
        scope, or put them back (`keep`), then preview it again (engine/forget/case_actions.py)."""
        return case_actions.exclude(self, request_id, items, keep)

    def withdraw(self, request_id: int, reason: str) -> ForgetRequest:
        """Close an open case without removing anything, keeping no text of it."""
        return case_actions.withdraw(self, request_id, reason)

    def approve(self, request_id: int) -> ForgetRequest:
        """A second operator signs off the case's previewed scope (`[forget] approvals = 2`)."""
        return case_actions.approve(self, request_id)

    def accept_residue(self, request_id: int, reason: str) -> ForgetRequest:
        """Record an executed case's residue as looked at and accepted, with a reason (audited)."""
        return case_actions.accept_residue(self, request_id, reason)

    # -- execute -------------------------------------------------------------------------------------
    def execute(
        self,
        request_id: int,
        memory_ids: builtins.list[int] | None = None,
        message_ids: builtins.list[int] | None = None,
        verify: bool = True,
    ) -> ForgetResult:
        """Remove the previewed set (or the chosen part of it: `memory_ids` / `message_ids`), then
        physically purge and, by default, verify. A case already executed (interrupted, or left
        `executed` by a reader) is finished: its reports redacted and its verification run."""
        req = self.get(request_id)
        if req.status == "executed" and memory_ids is None and message_ids is None:
            return self._finish(req.id, verify)
        if req.status not in ("open", "previewed"):
            raise InvalidInput(f"forget request {req.id} is already {req.status}")
        check_can_execute(req, self.ctx.settings.forget.approvals)
        report_files(self.path)  # an unsafe curator folder is refused before anything goes
        now = self.ctx.clock.now()
        actor = self.ctx.actor
        eraser = self.store.eraser
        token = req.selected.get("seal")
        if not token:  # recorded first, so a run killed mid-way leaves no seal nobody can name
            token = new_token()
            selected = {**req.selected, "seal": token}
            self.store.write(lambda c: c.forget_requests.set_selected(req.id, selected))

        server = eraser.server
        packed = server.compressed if server is not None else None

        def write(conn: Connection) -> None:
            with eraser.tolerant(conn):
                delete_case(conn, eraser, req, token, memory_ids, message_ids, now, actor, self.path, packed)
                wf = {**req.workflow, "executed_by": stamp(actor, now)}
                conn.forget_requests.set_workflow(req.id, wf)
                eraser.purge_indexes(conn)
                _test_pause("before-commit")

        try:
            self.store.write(write)
        except BaseException:
            discard(self.path, token)  # the sealed copy goes: re-verify uses the fingerprints
            raise
        _test_pause("after-commit")
        return self._finish(req.id, verify)

    def _finish(self, request_id: int, verify: bool) -> ForgetResult:
        """What follows the deletion: redact the curator's reports, then verify. Idempotent, so an
        interrupted case is finished by running it again from any process."""
        req = self.get(request_id)
        held = unseal(self.path, req.selected.get("seal"))
        if held is not None:
            counts = dict(req.counts)
            counts["reports_redacted"] = counts.get("reports_redacted", 0) + redact_reports(
                self.path, held[0] + held[1]
            )
            counts["audit_swept"] = counts.get("audit_swept", 0) + self._sweep_audit(
                req.id, held[0] + held[1]
            )
            if counts != req.counts:
                self.store.write(lambda c: c.forget_requests.set_counts(req.id, counts))
        ver = self.verify(req.id) if verify else None
        req = self.get(req.id)
        return ForgetResult(req.id, req.status, req.counts, req.residue, ver)

    def _sweep_audit(self, request_id: int, texts: builtins.list[str]) -> int:
        """Audit rows quoting the text outside the forgotten records: found in short reads that
        block no writer, redacted in one short write (engine/audit/redact.py, issue 24)."""
        ids = audit_redact.suspects(self.store.reading, texts)
        if not ids:
            return 0
        now, actor = self.ctx.clock.now(), self.ctx.actor
        return len(self.store.write(
            lambda c: audit_redact.sweep_write(c, ids, texts, at=now, actor=actor, request_id=request_id)
        ))  # fmt: skip

    def run(
        self,
        scope_kind: str,
        values: Any,
        reason: str,
        *,
        preview: bool = False,
        deadline: float | str | None = None,
        match: str | None = None,
    ) -> ForgetPreview | ForgetResult:
        """One call: open a case (or reuse the open case with the same scope, so a preview and the
        execution after it are one case), preview it, and (unless `preview`) execute and verify it."""
        value = scope_value(scope_kind, values) if scope_kind in FORGET_SCOPES else ""
        mode = check_mode(match)
        same = self.store.query(lambda c: c.forget_requests.open_case(scope_kind, value))
        if same is not None and scope_kind == "query" and match_mode(self.get(same)) != mode:
            same = None  # the same words matched another way are another case
        req = self.get(same) if same is not None else self.open(scope_kind, values, reason, deadline, mode)
        pv = self.preview(req.id)
        return pv if preview else self.execute(req.id)

    # -- verify ----------------------------------------------------------------------------------------
    def generation(self) -> int:
        """How many forget cases have been executed: a cache of recalled text built at another
        generation may hold what a forget removed since (the Hermes provider's prefetch)."""
        return self.store.query(lambda c: c.forget_requests.executed_count())

    def is_forgotten(self, kind: str, *, ident: str | None = None, text: str | None = None) -> bool:
        """Would an import skip this? True if a tombstone of `kind` ('session', 'message',
        'memory', 'rule', 'flow') matches the source identity or the content. For writers that
        copy from an agent's own store (the Hermes provider), so a forget stays done."""
        with self.store.reading() as conn:
            return is_forgotten(conn, kind=kind, ident=ident, text=text)

    def verify(self, request_id: int) -> Verification:
        """Checkpoint and truncate the WAL, then scan the database files and reports for the text,
        in a child process (engine/forget/scan.py: this process must never open and close the
        database's files while its connection lives). The texts come from the case's sealed copy,
        so any process of this installation can re-verify; without one (already verified, or
        sealed under another key) the result says `checked_texts == 0` and is not recorded."""
        return forget_verifying.verify(self, request_id)


def _test_pause(stage: str) -> None:
    """Tests only: `MEMCONSOLE_FORGET_TEST_PAUSE=<stage>:<marker file>` stops here (marker
    written, then a long sleep) so a test can kill the process at this exact point."""
    spec = os.environ.get("MEMCONSOLE_FORGET_TEST_PAUSE", "")
    if spec.partition(":")[0] == stage:
        Path(spec.partition(":")[2]).write_text(stage)
        time.sleep(120)
