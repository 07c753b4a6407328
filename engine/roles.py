"""Roles the engine enforces, and which engine call needs which.

    viewer   read, search, explain (a viewer's search records no access), export, doctor (no repair)
    agent    viewer + what an agent does through its door: remember, recall (records access),
             log turns and sessions, reject a rule, record a gate or a flow run, archive a memory
             it mirrors (Hermes). MCP tokens and the Hermes provider act with this role.
    curator  agent + approve / reject / undo proposals, run the curator and decay, pin / retire /
             revive rules, edit / pin / archive / restore memories, import
    forget   viewer + open, preview, execute, verify forget cases ("forget officer")
    admin    everything, and what only it does: doctor --repair, re-keying the audit chain,
             granting and revoking roles (config, keys and tokens are files only its OS user owns)

Who holds which role: engine/operators.py. Where it is checked: every public method of every
service the façade builds is listed in POLICY (a contract test fails for an unlisted one); methods
needing more than `viewer` are wrapped on the service instance when the façade builds it, so every
door (CLI, console, MCP, Hermes, a Python caller) goes through the same check. The check applies to
the outermost guarded call only: what a permitted call does inside (a forget case re-chaining the
audit, gates recording a violation) is part of the permitted action.
"""

from __future__ import annotations

import functools
from collections.abc import Callable, Iterable
from contextvars import ContextVar
from enum import StrEnum
from typing import Any


class Role(StrEnum):
    VIEWER = "viewer"
    AGENT = "agent"
    CURATOR = "curator"
    FORGET = "forget"
    ADMIN = "admin"


# What each role includes (admin includes every role).
IMPLIES: dict[Role, frozenset[Role]] = {
    Role.VIEWER: frozenset({Role.VIEWER}),
    Role.AGENT: frozenset({Role.AGENT, Role.VIEWER}),
    Role.CURATOR: frozenset({Role.CURATOR, Role.AGENT, Role.VIEWER}),
    Role.FORGET: frozenset({Role.FORGET, Role.VIEWER}),
    Role.ADMIN: frozenset(Role),
}
ROLE_NAMES = {"forget-officer": Role.FORGET, "forget_officer": Role.FORGET, **{r.value: r for r in Role}}
OPERATOR_ROLES = (Role.VIEWER, Role.CURATOR, Role.FORGET, Role.ADMIN)  # what an operator is granted


def role_of(text: str) -> Role:
    from engine.errors import InvalidInput

    r = ROLE_NAMES.get(str(text).strip().lower())
    if r is None:
        raise InvalidInput(f"unknown role {text!r} (one of: viewer, curator, forget, admin)")
    return r


def expand(roles: Iterable[Role]) -> frozenset[Role]:
    out: set[Role] = {Role.VIEWER}
    for r in roles:
        out |= IMPLIES[r]
    return frozenset(out)


def best(roles: frozenset[Role]) -> str:
    """One word for a header: the strongest role held (admin, then curator+forget, ...)."""
    if Role.ADMIN in roles:
        return "admin"
    named = [r.value for r in (Role.CURATOR, Role.FORGET) if r in roles]
    if named:
        return "+".join(named)
    return "agent" if Role.AGENT in roles else "viewer"


Need = Role | Callable[..., Role]  # a role, or one chosen from the call's arguments


def _doctor(repair: bool = False, *a: Any, **k: Any) -> Role:
    return Role.ADMIN if repair else Role.VIEWER


_V, _A, _C, _F, _ADM = Role.VIEWER, Role.AGENT, Role.CURATOR, Role.FORGET, Role.ADMIN

# Every public method of every service on the façade ("noun.method"): the role it needs.
POLICY: dict[str, Need] = {
    # memories
    **{
        f"memories.{m}": _V
        for m in ("current_strength", "get", "list", "pending_vectors", "embed_one", "from_message")
    },
    **{f"memories.{m}": _A for m in ("add", "add_batch", "add_ex", "add_many", "add_many_ex", "archive")},
    **{f"memories.{m}": _A for m in ("reinforce", "reinforce_in", "backfill_vectors")},
    "memories.record_access": _A,
    **{f"memories.{m}": _C for m in ("archive_many", "decay_restart", "edit", "pin", "pin_many")},
    **{f"memories.{m}": _C for m in ("restore", "set_importance", "set_tier", "unpin")},
    # sessions
    **{
        f"sessions.{m}": _V
        for m in ("agent_of", "count_matches", "get", "get_message", "list", "search_messages")
    },
    **{f"sessions.{m}": _A for m in ("add", "add_message", "add_messages")},
    # retrieval (search is checked apart: a viewer's search records no access)
    **{
        f"retrieval.{m}": _V
        for m in (
            "boost_of",
            "elsewhere",
            "embed_query",
            "explain",
            "fuse",
            "keyword_plan",
            "keyword_ranks",
            "named_boosts",
            "said_of",
            "search",
            "search_with_context",
            "session_context",
            "deeper",
        )
    },  # fmt: skip
    # lifecycle
    **{f"decay.{m}": _V for m in ("curve", "distribution", "forecast", "last_run_at", "timeline")},
    "decay.run": _C,
    **{f"rules.{m}": _V for m in ("counts", "curve", "detail", "facets", "get", "history", "list", "top")},
    **{f"rules.{m}": _A for m in ("record_violation", "reject")},
    **{
        f"rules.{m}": _C
        for m in ("add", "insert", "pin", "unpin", "reinforce", "retire", "revive", "set_score")
    },
    **{f"flows.{m}": _V for m in ("check", "detail", "get", "list")},
    "flows.record_run": _A,
    **{f"flows.{m}": _C for m in ("add", "add_doc", "set_status")},
    **{f"boot.{m}": _V for m in ("context", "items")},
    "gates.pre": _V,
    "gates.post": _A,
    # audit ("refused" records a refusal: anyone may be refused)
    **{f"audit.{m}": _V for m in ("log", "verify", "writers", "refused")},
    "audit.rekey": _ADM,
    # importers
    **{f"importers.{m}": _V for m in ("export_jsonl", "export_records", "own_files")},
    **{f"importers.{m}": _C for m in ("hermes", "ingest", "jsonl", "markdown")},
    # curator
    **{
        f"curator.{m}": _V
        for m in ("get", "latest_report", "latest_run", "list", "pending", "rows", "runs", "stale")
    },
    **{
        f"curator.{m}": _C
        for m in ("approve", "approve_many", "reject", "reject_many", "reject_stale", "run", "undo")
    },
    **{f"curator.{m}": _V for m in ("plan", "undo_plan")},
    # a dry run writes then rolls back: a viewer's connection may not write even so (PostgreSQL)
    "curator.impact": _C,
    # forget
    **{f"forget.{m}": _V for m in ("deadlines", "generation", "get", "is_forgotten", "list")},
    **{f"forget.{m}": _F for m in ("accept_residue", "approve", "exclude", "withdraw")},
    **{f"forget.{m}": _F for m in ("open", "preview", "execute", "run", "verify")},
    # health
    "health.doctor": _doctor,
    # recalls and retrieval checks (engine/recalls/): reading the log, replaying and running checks
    # are reads (a check run records its outcome: bookkeeping, as a search's access is)
    **{f"recalls.{m}": _V for m in ("count", "get", "list", "replay", "request_of", "rerun", "why_not")},
    "recalls.prune": _ADM,
    **{f"checks.{m}": _V for m in ("failing", "get", "list", "request_of", "run", "run_due")},
    **{f"checks.{m}": _C for m in ("add", "add_from_recall", "remove")},
    # embedding models (engine/embedding/reembed.py): re-embedding a store is the admin's
    **{f"embedding.{m}": _V for m in ("models", "status")},
    **{f"embedding.{m}": _ADM for m in ("start", "run", "run_in_background", "cancel")},
    # operators (engine/operators.py)
    **{f"operators.{m}": _V for m in ("whoami", "list", "check", "roles", "roles_with_why")},
    **{f"operators.{m}": _ADM for m in ("grant", "revoke")},
    "operators.change_account": _ADM,  # browser console accounts (memconsole serve-user)
}

# The façade's own public methods: the service call each one is (so it is guarded there) or a read.
FACADE: dict[str, str | None] = {
    "add_memory": "memories.add",
    "add_memories": "memories.add_many",
    "search": "retrieval.search",
    "explain": "retrieval.explain",
    "acting_as": None,  # who is calling, not an action
    "as_agents_door": None,
    "close": None,
    "counts": None,
    "data_version": None,
    "wait_for_embedder": None,
}

# True inside a permitted guarded call: what it calls in turn is part of it.
_inside: ContextVar[bool] = ContextVar("memconsole_inside_guarded", default=False)


def needed(key: str, args: tuple, kwargs: dict) -> Role:
    need = POLICY[key]
    return need if isinstance(need, Role) else need(*args, **kwargs)


def guard(service: object, noun: str, check: Callable[[str, Role], None]) -> None:
    """Wrap, on this instance, each method of `service` that needs more than viewer with `check`
    (which raises Refused). Reads are left as they are (no cost on the hot read paths)."""
    for name in dir(type(service)):
        key = f"{noun}.{name}"
        if name.startswith("_") or key not in POLICY or POLICY[key] == Role.VIEWER:
            continue
        setattr(service, name, _wrapped(getattr(service, name), key, check))


def _wrapped(fn: Callable[..., Any], key: str, check: Callable[[str, Role], None]) -> Callable[..., Any]:
    @functools.wraps(fn)
    def call(*args: Any, **kwargs: Any) -> Any:
        if _inside.get():
            return fn(*args, **kwargs)
        check(key, needed(key, args, kwargs))
        token = _inside.set(True)
        try:
            return fn(*args, **kwargs)
        finally:
            _inside.reset(token)

    call.__memconsole_needs__ = key  # type: ignore[attr-defined]
    return call


def inside_guarded() -> bool:
    return _inside.get()
