"""One typed settings object: every tunable the engine documents, with its default.

Values can be overridden from a TOML file (`<config dir>/memconsole/config.toml`, or the file named
by MEMCONSOLE_CONFIG) with sections matching the dataclasses below, e.g.

    [decay]
    half_life_days = { episodic = 7, semantic = 30, procedural = 90 }
    [search]
    vector_weight = 0.8

The decay, lifecycle, curator and forget sections are in engine/config_lifecycle.py; reading the
file (read_config, load_settings) is engine/config_file.py. Every name is imported from here.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field, fields

from engine.config_file import ConfigError, _got, load_settings, read_config
from engine.config_lifecycle import CuratorSettings, DecaySettings, ForgetSettings, LifecycleSettings
from engine.errors import cut

# Imported from here by the rest of the engine, the shell and the tests (engine.config is the one
# settings module; config_file reads the file, config_lifecycle holds four of the sections).
__all__ = [
    "ConfigError",
    "CuratorSettings",
    "DecaySettings",
    "ForgetSettings",
    "LifecycleSettings",
    "load_settings",
    "read_config",
]


@dataclass(frozen=True)
class SearchSettings:
    """Retrieval defaults, each chosen on the LoCoMo benchmark (bench/locomo.py, BENCHMARKS.md) and
    kept only where it held on conversations it was not chosen on (bench/locomo_tune.py)."""

    # Per retriever, before fusion. 100 rather than 50: score-aware fusion lifts a memory that one
    # retriever ranks 60th but the other likes; cost is ~1 ms.
    candidates: int = 100
    # "convex": keyword_share·BM25/best BM25 + (1-keyword_share)·min-max-scaled cosine (engine/
    # fusion.py). It keeps score gaps that rank fusion throws away; plain RRF loses to BM25 alone
    # on LoCoMo at k <= 10, convex fusion beats both retrievers at every k. "rrf": weighted RRF.
    fusion: str = "convex"
    keyword_share: float = 0.6  # BM25 is the stronger retriever on conversational recall
    # Hybrid only: the memories written just before and after a candidate in the same session get
    # this share of its fused score (answers sit next to the turn that shares the question's
    # words). Chosen by leave-one-conversation-out on LoCoMo (bench/locomo_loo.py): 0.3-0.4 is
    # flat (dev R@10 0.806-0.812), 0.15 was a peak of one split; 0 turns it off.
    session_context: float = 0.35
    # How many turns each way in the session get that share: 2 = the turn next to a candidate and
    # the one after it (in a dialogue, the same speaker's previous / next turn). Chosen leave-one-
    # conversation-out on a plain ingest (bench/locomo_ideas.py): LoCoMo R@10 0.805 -> 0.857; a
    # third turn adds nothing. 1 = only the adjacent turns (the behaviour before; one read less).
    session_reach: int = 2
    # Hybrid only: a question naming exactly one speaker of its candidates (metadata.speaker)
    # multiplies that speaker's memories' fused scores by 1 + speaker_boost; one naming a month
    # and/or year, memories dated then (metadata.date, else when written) by 1 + date_boost.
    # Together +0.04 LoCoMo R@10 on dev and +0.02 on held-out conversations, R@1 +0.04 on both
    # (BENCHMARKS.md). Without metadata a leading "Name:" is the speaker and created_at the date;
    # a day named beside the month narrows the date to that day.
    speaker_boost: float = 0.5
    date_boost: float = 2.0
    # Hybrid only: a question asking when ("When did ...", "How long ago ...") multiplies memories
    # whose text carries a time expression ("yesterday", "last June") by 1 + time_boost; without
    # metadata, a leading "Name:" is a memory's speaker and created_at its date (issue #26).
    # Chosen leave-one-conversation-out on a plain ingest (bench/locomo_plain.py): speaker 0.25-1,
    # date 1-3 and time 0.5-2 are flat (R@10 within 0.01); these are the middle of that region.
    time_boost: float = 1.0
    rrf_k: float = 60.0  # fusion = "rrf" only
    keyword_weight: float = 1.0  # fusion = "rrf" only
    vector_weight: float = 1.0  # fusion = "rrf" only
    # Keyword queries drop words more than this share of memories contain, once there are
    # common_terms_from memories (the rarest word always remains). BM25 weighs such a word little
    # (IDF <= log 9; ~0 past half), yet FTS5 must score every memory containing it: at 100k one
    # such word cost ~0.5 s. On LoCoMo with the size floor lifted: hybrid R@10 0.766 -> 0.770,
    # keyword-only R@1 -0.010 / R@10 -0.004 (at 0.05: keyword R@1 -0.03). 0 = keep every word.
    common_term_share: float = 0.1
    common_terms_from: int = 20_000
    # Matches one keyword query scores over every memory (engine/keyword.py): past this, the kept
    # words' commoner part is scored over the newest memories only, in a window of ids sized to
    # about this many matches. A cap on the worst queries, not a speed-up of the median: at 1M
    # (bench/keyword_bounds.py) the slowest of 100 queries 563 -> 295 ms, p50/p95 and the top 10
    # unchanged vs no bound (69.0% vs 69.1% agreement with every-word search); 40k also cut p95
    # (228 -> 141 ms) but agreement to 57%. Never applies below this many memories. 0 = off.
    keyword_rows: int = 150_000
    # Vector search answers from an in-memory matrix (engine/retrieval/vector_matrix.py; KNN ~20x
    # faster than the store's vector scan at 100k) once an engine has run this many vector
    # searches: the matrix then loads in a background thread on its own connection (seconds at
    # 100k, ~1.5 KB a memory) and the store's vector index answers until it is ready. Long-lived
    # engines (console, benches) get it; one-shot CLI calls never pay to load it.
    # `eng.vectors.keep_in_memory(background=True)` starts it at once. It follows every process's
    # writes through the vector_changes log. 0 = never.
    matrix_after: int = 3
    # Likewise for the words: after this many keyword searches a long-lived engine loads every
    # memory's postings (engine/retrieval/keyword_matrix.py: ~0.5 s and ~30 MB at 100k) and ranks
    # every query word over every match exactly, in milliseconds, without the cost bounds below
    # (common_term_share, keyword_rows), which then shape one-shot engines' queries only. 0 = never.
    keyword_matrix_after: int = 3
    # From this many vectors on, the matrix finds candidates by the Hamming distance of sign bits
    # (32x less memory to scan) and rescores max(bits_rescore, 10·k) of them exactly; below it,
    # or when a filter leaves fewer rows, it is exact. recall@10 vs exact: BENCHMARKS.md.
    bits_from: int = 50_000
    bits_rescore: int = 2000
    # An add_memories batch at least this big checks near-duplicates against the in-memory matrix
    # in one product instead of one vector-index scan per item (75 ms each at 100k memories).
    dedup_matrix_from: int = 32
    # PostgreSQL: below this many vectors KNN scans exactly; from it on it walks the HNSW index
    # (iterative scan, so filters still get k rows) with ef_search = max(pg_ef_search, k).
    # recall@10 of HNSW vs exact at 100k: BENCHMARKS.md (bench/pg_vectors.py).
    # 20,000: with the agent btree, a 10% filter of 100k scans exactly in 15 ms (recall 1) where
    # HNSW takes 16 ms at recall 0.98; unfiltered 100k: HNSW 20 ms vs exact 112 ms.
    pg_exact_below: int = 20_000
    # 200: recall@10 0.9995 unfiltered and 0.981 with a 10% filter at 100k (100: 0.995 / 0.971).
    pg_ef_search: int = 200
    # final = fused · (1 - w_s - w_i - w_r + w_s·strength + w_i·importance + w_r·recency)
    strength_weight: float = 0.1
    importance_weight: float = 0.1
    recency_weight: float = 0.05
    recency_half_life_days: float = 30.0
    dedup_threshold: float = 0.95
    thin_results: int = 3  # fewer hits than this: say where else the query matches
    # A hit with no keyword match whose cosine is below this is "weak" (shown dimmed, `weak` in
    # JSON). Measured on the demo with the default MiniLM: `*` tops at 0.18, an emoji at 0.31,
    # nonsense words ("zxqvbnm", "asdf qwer") at 0.27, "holiday plans" (nothing about it) at 0.32;
    # paraphrases with no shared word find their answer at 0.39-0.63 ("dark or light appearance"
    # 0.47, "how much money can I lose in a day" 0.63, "font" 0.47).
    weak_below: float = 0.35
    weak_floor_cut: bool = False  # true: weak hits are left out of the results instead


@dataclass(frozen=True)
class McpSettings:
    """The agents' HTTP door (`memconsole mcp --http`): who may reach it and how much one caller
    may take (README "The MCP server"). Sizes in characters or bytes, times in seconds."""

    allowed_hosts: tuple = ()  # Host header values ("mem.example.org:8765", "10.0.0.5:*")
    allowed_origins: tuple = ()  # Origin header values ("https://agents.example.org")
    max_connections: int = 1000  # open sockets; also kept below the descriptor limit
    request_timeout: float = 10.0  # a request's headers and body arrive within this, or it is dropped
    sessions_per_token: int = 16
    session_idle: float = 1800.0  # a session unused this long expires
    calls_per_token: int = 4  # running at once; read-only tokens: 1
    queued_per_token: int = 8  # waiting behind those; more is refused at once
    max_text: int = 32_000  # characters in a query or any one text argument
    max_body: int = 1_000_000  # bytes in one request
    # Tool calls inside the engine at once (each holds one pool connection at a time); more wait
    # their turn in the door, without a deadline. 0: the engine's [postgres] pool_size (issue #24).
    engine_calls: int = 0


@dataclass(frozen=True)
class RecallsSettings:
    """The recall log (README "What agents asked"): one row per agent recall, kept `keep_days`
    and at most `max_rows` (pruned every few hundred recalls); `log = false` turns it off."""

    log: bool = True
    keep_days: float = 30.0
    max_rows: int = 200_000


@dataclass(frozen=True)
class PostgresSettings:
    """A server database (README "A fleet on one server"). Each engine process holds a pool of
    at most `pool_size` connections (writes run concurrently, one connection each; an MCP server
    runs tool calls concurrently) plus one for LISTEN once a live view asks."""

    pool_size: int = 8
    # false: no server-side prepared statements. Only for a pooler the store cannot recognise
    # (engine/storage/postgres/pooler.py: a recognised one, e.g. PgBouncer, gets none anyway).
    prepared_statements: bool = True
    # The audit log is this many hash chains, each with its own head lock (issue #24): concurrent
    # audited writes take different ones instead of queueing on one head. 1: one chain.
    audit_partitions: int = 8


@dataclass(frozen=True)
class ServeSettings:
    """The console in a browser (`memconsole serve`, README "The console in a browser"): each
    signed-in browser tab runs its own console process; at most `max_consoles` run at once (one
    more is refused with a one-line page), so a crowd of tabs cannot exhaust the host."""

    max_consoles: int = 8


@dataclass(frozen=True)
class EmbedBatchSettings:
    """Concurrent embed calls in one process share a forward pass of the model (README "Many agents
    on one model", engine/embedding/batcher.py): a lone call waits at most `window_ms`; a batch
    holds at most `max_batch` texts. `enabled = false`: every call runs the model on its own."""

    enabled: bool = True
    window_ms: float = 2.0
    max_batch: int = 32


# The same file's section for the console's own settings (its key remaps): the console reads it.
CONSOLE_SECTION = "keymap"


@dataclass(frozen=True)
class Settings:
    decay: DecaySettings = field(default_factory=DecaySettings)
    search: SearchSettings = field(default_factory=SearchSettings)
    lifecycle: LifecycleSettings = field(default_factory=LifecycleSettings)
    curator: CuratorSettings = field(default_factory=CuratorSettings)
    model_path: str | None = None
    forget: ForgetSettings = field(default_factory=ForgetSettings)
    mcp: McpSettings = field(default_factory=McpSettings)
    postgres: PostgresSettings = field(default_factory=PostgresSettings)
    # Actor names mixing scripts (a Cyrillic letter in a Latin name) are refused unless true.
    actor_mixed_scripts: bool = False
    recalls: RecallsSettings = field(default_factory=RecallsSettings)
    serve: ServeSettings = field(default_factory=ServeSettings)
    embed_batch: EmbedBatchSettings = field(default_factory=EmbedBatchSettings)


_BIG = 10**9
_UNIT = (0.0, 1.0)
# key -> (kind, low, high). kind: "float" (finite; ints accepted), "int", "pos" (finite, > 0).
# Every numeric setting is listed: a new one without a range fails test_every_number_has_a_range.
_RANGES: dict[str, tuple[str, float, float]] = {
    "decay.archive_threshold": ("float", *_UNIT),
    "recalls.keep_days": ("pos", 0, 36500),
    "recalls.max_rows": ("int", 1, _BIG),
    "decay.reinforce_boost": ("float", *_UNIT),
    "decay.rule_grace_days": ("float", 0, 36500),
    "decay.rule_daily_loss": ("float", 0, 10),
    "decay.rule_reinforce_boost": ("float", 0, 10),
    "decay.rule_violation_boost": ("float", 0, 10),
    "decay.snapshot_step": ("float", *_UNIT),
    "search.candidates": ("int", 1, 100_000),
    "search.keyword_share": ("float", *_UNIT),
    "search.session_context": ("float", *_UNIT),
    "search.session_reach": ("int", 1, 2),
    "search.speaker_boost": ("float", 0, 100),
    "search.date_boost": ("float", 0, 100),
    "search.time_boost": ("float", 0, 100),
    "search.rrf_k": ("pos", 0, 1e6),
    "search.keyword_weight": ("float", 0, 1e6),
    "search.vector_weight": ("float", 0, 1e6),
    "search.common_term_share": ("float", *_UNIT),
    "search.common_terms_from": ("int", 0, _BIG),
    "search.keyword_rows": ("int", 0, _BIG),
    "search.matrix_after": ("int", 0, _BIG),
    "search.keyword_matrix_after": ("int", 0, _BIG),
    "search.bits_from": ("int", 0, _BIG),
    "search.bits_rescore": ("int", 1, _BIG),
    "search.dedup_matrix_from": ("int", 1, _BIG),
    "search.pg_exact_below": ("int", 0, _BIG),
    "search.pg_ef_search": ("int", 1, 1000),
    "search.strength_weight": ("float", *_UNIT),
    "search.importance_weight": ("float", *_UNIT),
    "search.recency_weight": ("float", *_UNIT),
    "search.recency_half_life_days": ("pos", 0, 36500),
    "search.dedup_threshold": ("float", *_UNIT),
    "search.thin_results": ("int", 0, 10_000),
    "search.weak_below": ("float", -1.0, 1.0),
    "curator.merge_threshold": ("float", *_UNIT),
    "curator.rule_prefix_chars": ("int", 1, 100_000),
    "curator.max_cluster": ("int", 2, 100_000),
    "curator.stale_days": ("float", 0, 36500),
    "curator.archive_days": ("float", 0, 36500),
    "curator.promote_min_reinforcements": ("int", 0, _BIG),
    "curator.promote_rule_score": ("float", 0, 10),
    "curator.retire_days": ("float", 0, 36500),
    "curator.merged_rule_bonus": ("float", 0, 10),
    "lifecycle.flow_flag_below": ("float", *_UNIT),
    "lifecycle.flow_flag_min_runs": ("int", 0, _BIG),
    "lifecycle.flow_trend_window": ("int", 1, 100_000),
    "lifecycle.boot_max_rules": ("int", 0, 100_000),
    "lifecycle.boot_max_items": ("int", 0, 100_000),
    "lifecycle.chars_per_token": ("pos", 0, 1000),
    "lifecycle.state_similarity": ("float", *_UNIT),
    "forget.deadline_days": ("pos", 0, 36500),
    "forget.approvals": ("int", 1, 2),
    "mcp.max_connections": ("int", 8, 1_000_000),
    "mcp.request_timeout": ("pos", 0, 3600),
    "mcp.sessions_per_token": ("int", 1, 100_000),
    "mcp.session_idle": ("pos", 0, 30 * 86400),
    "mcp.calls_per_token": ("int", 1, 1000),
    "mcp.queued_per_token": ("int", 0, 100_000),
    "mcp.max_text": ("int", 1, 100_000_000),
    "mcp.max_body": ("int", 1024, 1_000_000_000),
    "mcp.engine_calls": ("int", 0, 1000),
    "postgres.pool_size": ("int", 1, 1000),
    "postgres.audit_partitions": ("int", 1, 1024),
    "serve.max_consoles": ("int", 1, 10_000),
    "embed_batch.window_ms": ("float", 0, 1000),
    "embed_batch.max_batch": ("int", 1, 4096),
}
_CHOICES = {"search.fusion": ("convex", "rrf")}


def _check_number(key: str, v, kind: str, lo: float, hi: float) -> None:
    if kind == "int":
        if isinstance(v, bool) or not isinstance(v, int):
            raise ConfigError(f"{key} must be a whole number (got {_got(v)})")
    elif isinstance(v, bool) or not isinstance(v, (int, float)) or not math.isfinite(v):
        raise ConfigError(f"{key} must be a finite number (got {_got(v)})")
    if kind == "pos" and not v > 0:
        raise ConfigError(f"{key} must be above 0 (got {_got(v)})")
    if not lo <= v <= hi:
        raise ConfigError(f"{key} must be between {lo:g} and {hi:g} (got {_got(v)})")


def validate(s: Settings) -> Settings:
    """Types and ranges of every value (a file can hold `3` for a share or `nan` for a weight:
    TOML has both). Raises ConfigError naming the first bad key."""
    from engine.curator.types import PROPOSAL_KINDS
    from engine.types import KINDS

    for section in ("decay", "search", "curator", "lifecycle", "mcp", "recalls", "postgres", "forget"):
        obj = getattr(s, section)
        for f in fields(obj):
            key, v = f"{section}.{f.name}", getattr(obj, f.name)
            if key in _RANGES:
                _check_number(key, v, *_RANGES[key])
            elif key in _CHOICES and v not in _CHOICES[key]:
                raise ConfigError(f"{key} must be one of {', '.join(_CHOICES[key])} (got {_got(v)})")
    _check_number("serve.max_consoles", s.serve.max_consoles, *_RANGES["serve.max_consoles"])
    if not isinstance(s.search.weak_floor_cut, bool):
        raise ConfigError(
            f"search.weak_floor_cut must be true or false (got {_got(s.search.weak_floor_cut)})"
        )
    if not isinstance(s.actor_mixed_scripts, bool):
        raise ConfigError(f"actor_mixed_scripts must be true or false (got {_got(s.actor_mixed_scripts)})")
    if not isinstance(s.recalls.log, bool):
        raise ConfigError(f"recalls.log must be true or false (got {_got(s.recalls.log)})")
    if not isinstance(s.postgres.prepared_statements, bool):
        raise ConfigError(
            f"postgres.prepared_statements must be true or false (got {_got(s.postgres.prepared_statements)})"
        )
    if not isinstance(s.forget.host_files, bool):
        raise ConfigError(f"forget.host_files must be true or false (got {_got(s.forget.host_files)})")
    for url in s.forget.replicas:
        if not url.startswith(("postgresql://", "postgres://")):
            raise ConfigError(f"forget.replicas: {cut(url)} is not a postgresql:// URL")
    _check_number("forget.replica_wait", s.forget.replica_wait, "num", 0, 3600)
    for kind, days in s.decay.half_life_days.items():
        if kind not in KINDS:
            raise ConfigError(f"decay.half_life_days.{kind}: unknown kind (known: {', '.join(KINDS)})")
        _check_number(f"decay.half_life_days.{kind}", days, "pos", 0, 36500)
    bad = [k for k in s.curator.auto_apply if k not in PROPOSAL_KINDS]
    if bad:
        raise ConfigError(
            f"curator.auto_apply: unknown proposal kind {cut(bad[0])} (known: {', '.join(PROPOSAL_KINDS)})"
        )
    if s.model_path is not None and not isinstance(s.model_path, str):
        raise ConfigError(f"model_path must be a string (got {_got(s.model_path)})")
    if not isinstance(s.embed_batch.enabled, bool):
        raise ConfigError(f"embed_batch.enabled must be true or false (got {_got(s.embed_batch.enabled)})")
    for name in ("window_ms", "max_batch"):
        _check_number(f"embed_batch.{name}", getattr(s.embed_batch, name), *_RANGES[f"embed_batch.{name}"])
    return s
